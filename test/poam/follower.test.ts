import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, events, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { enqueueJob } from '../../src/platform/jobs/queue.js';
import { FOLLOW_JOB, poamModule } from '../../src/modules/poam/module.js';
import { followFindingEvents } from '../../src/modules/poam/finding-follower.js';
import { auditOf, manualItem, poamApi } from './helpers.js';

/**
 * The automatic rule: an audit that resolves a linked finding moves the item to verification (never
 * to closed); an audit that sees it again moves it back to in_progress. Driven by the follower of
 * finding.resolved / finding.reopened outbox events, run here through the job queue as the scheduler
 * would.
 */
let t: TestApp;
let tenant: TenantFixture;
let token: string;
let api: ReturnType<typeof poamApi>;
const RULE = 'aws-s3-bucket-versioning';
const node = (name: string, which: 'violating' | 'compliant') => fixtureNode(RULE, which, name);
const findingOf = (name: string) => `${RULE}:${nodeIdOf(node(name, 'violating'))}`;

async function runFollower() {
  // By id: several runs share one clock instant, so created_at cannot tell them apart.
  const { id } = await enqueueJob(t.deps.database.db, t.clock, { kind: FOLLOW_JOB });
  await t.drain();
  const job = await t.deps.database.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  expect(job.status).toBe('succeeded');
  return job.result as { events: number; moved_to_verification: number; moved_to_in_progress: number };
}

const statusOf = async (id: string) => (await api.get(token, id, 200)).json().status;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  api = poamApi(t, tenant.id);
  token = tenant.users['security-analyst'].token;
  await putNodes(
    t,
    token,
    tenant.id,
    ['f-b1', 'f-b2', 'f-b3', 'f-b4'].map((n) => node(n, 'violating')),
  );
  await audit(t, token, tenant.id);
});
afterAll(() => t.close());
beforeEach(async () => {
  token = (await fresh(t, tenant.users['security-analyst'])).token;
});

describe('finding events follower', () => {
  it('is a registered job kind with a schedule', () => {
    expect(poamModule.jobs!(t.deps).map((j) => j.kind)).toContain(FOLLOW_JOB);
    expect(poamModule.schedules!(t.deps)).toEqual([{ name: 'poam-finding-follower', kind: FOLLOW_JOB, intervalMs: 30_000 }]);
  });

  it('an audit that resolves the finding moves open and in_progress items to verification, never closed; a manual resolve moves nothing', async () => {
    const a = (await api.create(token, { finding_id: findingOf('f-b1') }, 201)).json().id;
    const b = (await api.create(token, { finding_id: findingOf('f-b2') }, 201)).json().id;
    const c = (await api.create(token, { finding_id: findingOf('f-b3') }, 201)).json().id;
    const unrelated = (await api.create(token, manualItem(), 201)).json().id;
    await api.status(token, b, { status: 'in_progress' }, 200);
    // A person marks f-b3 resolved: that proves nothing about the fix.
    await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(findingOf('f-b3'))}/resolve`, payload: {}, expect: 200 });

    t.clock.advance(60_000);
    await putNodes(t, token, tenant.id, [node('f-b1', 'compliant'), node('f-b2', 'compliant')]);
    await audit(t, token, tenant.id);
    expect((await events(t, tenant.id, 'finding.resolved')).map((e) => e.data.finding_id)).toEqual(expect.arrayContaining([findingOf('f-b1'), findingOf('f-b2')]));
    // Nothing moves before the follower runs (the lag).
    expect(await statusOf(a)).toBe('open');

    const result = await runFollower();
    expect(result.moved_to_verification).toBe(2);
    expect(await statusOf(a)).toBe('verification');
    expect(await statusOf(b)).toBe('verification');
    expect(await statusOf(c)).toBe('open');
    expect(await statusOf(unrelated)).toBe('open');

    const item = (await api.get(token, a, 200)).json();
    expect(item.comments.at(-1)).toMatchObject({ author: 'poam-finding-follower', status_from: 'open', status_to: 'verification' });
    expect(item.comments.at(-1).text).toContain('resolved by an audit');
    expect(item.closed_at).toBeNull();
    const entry = (await auditOf(t, tenant.id, b)).find((e) => e.action === 'poam.status_changed' && e.actor_type === 'system')!;
    expect(entry).toMatchObject({ actor_name: 'poam-finding-follower', actor_id: null });
    expect(entry.details).toMatchObject({ from: 'in_progress', to: 'verification', automatic: true, finding_id: findingOf('f-b2') });

    // Running again changes nothing (each event is handled once).
    expect((await runFollower()).moved_to_verification).toBe(0);
    // Closing still needs evidence.
    expect((await api.status(token, a, { status: 'closed' })).statusCode).toBe(409);
  });

  it('an audit that detects the finding again moves a verification item back to in_progress', async () => {
    const a = (await api.list(token, `finding_id=${encodeURIComponent(findingOf('f-b1'))}`, 200)).json().items[0].id;
    expect(await statusOf(a)).toBe('verification');
    t.clock.advance(60_000);
    await putNodes(t, token, tenant.id, [node('f-b1', 'violating')]);
    await audit(t, token, tenant.id);
    const result = await runFollower();
    expect(result.moved_to_in_progress).toBe(1);
    const item = (await api.get(token, a, 200)).json();
    expect(item.status).toBe('in_progress');
    expect(item.comments.at(-1)).toMatchObject({ author: 'poam-finding-follower', status_from: 'verification', status_to: 'in_progress' });
    expect(item.comments.at(-1).text).toContain('verification failed');
  });

  it('a finding resolved and detected again before the follower runs moves nothing', async () => {
    const d = (await api.create(token, { finding_id: findingOf('f-b4') }, 201)).json().id;
    t.clock.advance(60_000);
    await putNodes(t, token, tenant.id, [node('f-b4', 'compliant')]);
    await audit(t, token, tenant.id);
    t.clock.advance(60_000);
    await putNodes(t, token, tenant.id, [node('f-b4', 'violating')]);
    await audit(t, token, tenant.id);
    await runFollower();
    expect(await statusOf(d)).toBe('open');
  });

  it('the read position advances past old events only, of every type; an event that becomes visible late below newer ones is still handled', async () => {
    const db = t.deps.database.db;
    // Events the follower ignores, after the last one it handles: the position passes them too, so
    // later runs do not scan them again.
    await putNodes(t, token, tenant.id, [node('f-b9', 'violating')]);
    await audit(t, token, tenant.id);
    const ignored = await db
      .selectFrom('outbox_events')
      .select((eb) => eb.fn.max('seq').as('seq'))
      .where('type', '=', 'finding.created')
      .executeTakeFirstOrThrow();
    const handled = await db
      .selectFrom('outbox_events')
      .select((eb) => eb.fn.max('seq').as('seq'))
      .where('type', 'in', ['finding.resolved', 'finding.reopened'])
      .executeTakeFirstOrThrow();
    expect(Number(ignored.seq)).toBeGreaterThan(Number(handled.seq));
    t.clock.advance(11 * 60_000);
    const newest = await db
      .selectFrom('outbox_events')
      .select((eb) => eb.fn.max('seq').as('seq'))
      .executeTakeFirstOrThrow();
    // One event younger than the look-back: the position stops below it.
    await db
      .insertInto('outbox_events')
      .values({ id: randomUUID(), tenant_id: tenant.id, workspace_id: tenant.defaultWorkspaceId, type: 'node.changed', data: '{}', created_at: t.clock.now() })
      .execute();
    await followFindingEvents(t.deps);
    const { position } = await db.selectFrom('poam_follower').select('position').executeTakeFirstOrThrow();
    expect(Number(position)).toBe(Number(newest.seq));
    expect(await db.selectFrom('poam_follower_receipts').selectAll().execute()).toEqual([]);

    // f-b2's item is in verification; the finding is seen again (as an audit would record it).
    const b = (await api.list(token, `finding_id=${encodeURIComponent(findingOf('f-b2'))}`, 200)).json().items[0].id;
    expect(await statusOf(b)).toBe('verification');
    await db.updateTable('finding_rows').set({ status: 'open' }).where('id', '=', findingOf('f-b2')).execute();
    const base = Number(newest.seq) + 1_000;
    const insert = (seq: number, findingId: string) =>
      db
        .insertInto('outbox_events')
        .values({
          seq: String(seq),
          id: randomUUID(),
          tenant_id: tenant.id,
          workspace_id: tenant.defaultWorkspaceId,
          type: 'finding.reopened',
          data: JSON.stringify({ finding: { id: findingId }, reopened_at: t.clock.now().toISOString() }),
          created_at: t.clock.now(),
        })
        .execute();
    await insert(base + 10, 'aws-s3-bucket-versioning:aws:us-east-1:aws.s3.bucket:gone');
    expect((await runFollower()).events).toBe(1);
    // Its transaction took a lower seq but commits only now.
    await insert(base + 5, findingOf('f-b2'));
    expect(await runFollower()).toMatchObject({ events: 1, moved_to_in_progress: 1 });
    expect(await statusOf(b)).toBe('in_progress');
  });
});
