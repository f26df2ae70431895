import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, type TenantFixture } from '../harness/identity.js';
import { duplicatedStateChanges, jobsPastLease } from '../harness/fault-checks.js';
import { emitEvents, type NewEvent } from '../../src/platform/events/outbox.js';
import { enqueueJob } from '../../src/platform/jobs/queue.js';

/**
 * The after-fault checks of the fault tests (harness/fault-checks.ts) find what they claim to: a
 * check that can never fail would make every fault test pass.
 */
describe('after-fault checks', () => {
  let t: TestApp;
  let tenant: TenantFixture;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await buildTenant(t);
  });
  afterAll(() => t?.close());

  const event = (type: string, data: Record<string, unknown>): NewEvent => ({ tenantId: tenant.id, workspaceId: tenant.defaultWorkspaceId, type, data });
  const emit = (events: NewEvent[]) => t.deps.database.db.transaction().execute((trx) => emitEvents(trx, t.clock, events));

  it('a state change recorded twice is found; a retried delivery of one event, or a real back-and-forth, is not', async () => {
    const finding = { id: 'rule-a:node-1', rule_id: 'rule-a', resource_id: 'node-1' };
    const control = { framework: 'soc2', control_id: 'CC6.1', title: 'x', triggered_by: 'run-1' };
    await emit([
      event('finding.created', { finding }),
      event('finding.resolved', { finding_id: finding.id, resolved_at: 'a', resolved_by: 'audit' }),
      event('finding.reopened', { finding, reopened_at: 'b' }),
      event('compliance.control_failed', control),
      event('compliance.control_passed', control),
      event('report.generated', { report: { id: 'r-1' } }),
    ]);
    expect(await duplicatedStateChanges(t.deps.database.db, tenant.id)).toEqual([]);

    await emit([
      event('finding.created', { finding }),
      event('compliance.control_passed', control),
      event('report.failed', { report: { id: 'r-1' } }),
      event('finding.resolved', { finding_id: 'rule-a:node-2', resolved_at: 'c', resolved_by: 'audit' }),
      event('finding.resolved', { finding_id: 'rule-a:node-2', resolved_at: 'd', resolved_by: 'audit' }),
    ]);
    const problems = await duplicatedStateChanges(t.deps.database.db, tenant.id);
    expect(problems).toHaveLength(5);
    expect(problems.join('\n')).toMatch(/rule-a:node-1 created: at seq \d+ and again/);
    expect(problems.join('\n')).toMatch(/rule-a:node-1: open at seq \d+ and again/);
    expect(problems.join('\n')).toMatch(/control .*soc2\/CC6\.1: compliance\.control_passed at seq/);
    expect(problems.join('\n')).toMatch(/report r-1 finished/);
    expect(problems.join('\n')).toMatch(/rule-a:node-2: resolved at seq/);
  });

  it('a job running past its lease is found, after the grace', async () => {
    const job = await enqueueJob(t.deps.database.db, t.clock, { kind: 'test.stuck' });
    const lease = new Date(t.clock.now().getTime() + 60_000);
    await t.deps.database.db.updateTable('jobs').set({ status: 'running', attempts: 1, lease_owner: 'dead', lease_expires_at: lease }).where('id', '=', job.id).execute();
    const at = (ms: number) => new Date(lease.getTime() + ms);
    expect(await jobsPastLease(t.deps.database.db, { now: at(-1) })).toEqual([]);
    expect(await jobsPastLease(t.deps.database.db, { now: at(5_000) })).toEqual([]);
    expect(await jobsPastLease(t.deps.database.db, { now: at(5_000), leaseGraceMs: 0 })).toEqual([`job test.stuck ${job.id} (attempt 1, dead) is running past its lease`]);
    expect(await jobsPastLease(t.deps.database.db, { now: at(11_000) })).toHaveLength(1);
  });
});
