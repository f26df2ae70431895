import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { dbKind } from '../harness/database.js';
import { buildTenant, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { events, fixtureNode } from '../harness/compliance.js';
import { builtinRules } from '../../src/modules/compliance/rule-catalog.js';
import { runAudit, type AuditInput } from '../../src/modules/compliance/audit/engine.js';
import { advisoryAuditLock, databaseAuditLock } from '../../src/modules/compliance/audit/workspace-lock.js';
import { FRAMEWORKS } from '../../src/modules/compliance/rules/rule-types.js';
import { openDatabase } from '../../src/platform/db/database.js';

/**
 * Two audits of one workspace at the same time (two discovery jobs that each audit after their
 * upsert, on PostgreSQL) collided on `duplicate key ... findings_pkey`: both read a batch's findings
 * before either committed, both inserted the same new finding, and the second's job failed and
 * retried. Audits of a workspace now run one after the other (workspace-lock.ts).
 */

let t: TestApp;
let tenant: TenantFixture;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
});
afterAll(() => t.close());

const RULE = 'aws-s3-bucket-versioning';
const NODES = 240;

function input(overrides: Partial<AuditInput> = {}): AuditInput {
  return {
    db: t.deps.database.db,
    clock: t.clock,
    scope: { tenantId: tenant.id, workspaceId: tenant.defaultWorkspaceId },
    runId: randomUUID(),
    frameworks: [...FRAMEWORKS],
    enabled: [...FRAMEWORKS],
    rules: builtinRules(),
    // Small batches, two writes in flight: many chances for two audits to interleave.
    batchSize: 20,
    writesInFlight: 2,
    ...overrides,
  };
}

/**
 * A pace (awaited before each batch's read and write) that lets two audits through together: the
 * first to arrive waits up to 50 ms for the other. An audit running alone just waits 50 ms a step.
 */
function lockstep(): () => Promise<void> {
  let waiting: (() => void) | null = null;
  return () =>
    new Promise<void>((resolve) => {
      if (waiting) {
        const other = waiting;
        waiting = null;
        other();
        resolve();
        return;
      }
      waiting = resolve;
      setTimeout(() => {
        if (waiting === resolve) {
          waiting = null;
          resolve();
        }
      }, 50);
    });
}

const findingRows = () =>
  t.deps.database.db.selectFrom('finding_rows').select(['id', 'rule_id']).where('workspace_id', '=', tenant.defaultWorkspaceId).where('rule_id', '=', RULE).execute();

describe('two audits of one workspace at the same time', () => {
  it('run one after the other: each finding is created once, with one finding.created event, and neither audit fails', async () => {
    const token = tenant.users['security-analyst'].token;
    const nodes = Array.from({ length: NODES }, (_, i) => fixtureNode(RULE, 'violating', `concurrent-${i}`));
    for (let i = 0; i < nodes.length; i += 100) await putNodes(t, token, tenant.id, nodes.slice(i, i + 100));

    // What two discovery jobs do: each runs an audit of the workspace with the jobs' lock. The two
    // step through their batches together when both are running (as two workers at the same speed
    // would), so without the lock both read each batch before either writes it: the collision.
    const lock = databaseAuditLock(t.deps.database);
    const pace = lockstep();
    const [first, second] = await Promise.all([runAudit(input({ lock, pace })), runAudit(input({ lock, pace }))]);
    const created = (await findingRows()).length;
    expect(created).toBe(NODES);
    // One audit created every finding of the rule; the other found them all open.
    const createdByRule = (stats: typeof first) => stats.findings_created;
    expect(createdByRule(first) + createdByRule(second)).toBe(
      new Set((await events(t, tenant.id, 'finding.created')).map((e) => (e.data as { finding: { id: string } }).finding.id)).size,
    );
    const ofRule = (await events(t, tenant.id, 'finding.created')).filter((e) => (e.data as { finding: { rule_id: string } }).finding.rule_id === RULE);
    expect(ofRule.length).toBe(NODES);
    expect(Math.min(first.findings_created, second.findings_created)).toBe(0);
  });

  it("without a lock of their own, audits of one process still queue per workspace (the engine's default)", async () => {
    const order: string[] = [];
    const slow = runAudit(
      input({
        baseline: async (current) => {
          order.push('first starts');
          await new Promise((r) => setTimeout(r, 300));
          order.push('first baseline');
          return current;
        },
      }),
    );
    const quick = runAudit(
      input({
        baseline: async (current) => {
          order.push('second starts');
          return current;
        },
      }),
    );
    await Promise.all([slow, quick]);
    expect(order).toEqual(['first starts', 'first baseline', 'second starts']);
  });

  it.runIf(dbKind() === 'postgres')('on PostgreSQL, an audit waits while another process audits the workspace (advisory lock), and an aborted wait gives up', async () => {
    const other = await openDatabase(t.deps.config.databaseUrl, { poolSize: 2 });
    try {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      // "Another process" holds the workspace's lock.
      const holder = advisoryAuditLock(other.db)(tenant.defaultWorkspaceId, undefined, async () => {
        entered();
        await held;
      });
      await inside;
      let started = false;
      const waiting = runAudit(input({ lock: databaseAuditLock(t.deps.database), baseline: async (current) => ((started = true), current) }));
      await new Promise((r) => setTimeout(r, 700));
      expect(started).toBe(false);
      // A waiting audit whose job is cancelled stops waiting.
      const controller = new AbortController();
      const cancelled = runAudit(input({ lock: databaseAuditLock(t.deps.database), signal: controller.signal }));
      controller.abort();
      await expect(cancelled).rejects.toThrow('audit aborted');
      release();
      await holder;
      await waiting;
      expect(started).toBe(true);
    } finally {
      await other.close();
    }
  });
});
