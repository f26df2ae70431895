import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, type TenantFixture } from '../harness/identity.js';
import { createPoamItems, type PoamItemInput } from '../../src/modules/poam/poam-service.js';
import type { AuditActor } from '../../src/platform/audit/audit-log.js';
import type { Scope } from '../../src/platform/db/scope.js';

/** createPoamItems, the entry point other modules (generate-poam) call inside their own transaction. */
let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let scope: Scope;
const actor: AuditActor = { type: 'user', id: null, name: 'assessor-1' };
const input = (overrides: Partial<PoamItemInput> = {}): PoamItemInput => ({
  weakness_name: 'Security awareness training not evidenced',
  weakness_description: 'The assessment found no training records for new staff.',
  control_ids: ['nist-800-53:AT-2', 'nist-800-171:3.2.1'],
  severity: 'MEDIUM',
  point_of_contact: 'hr-security',
  source: 'assessment:a-1',
  ...overrides,
});
const create = (items: PoamItemInput[], s: Scope = scope) => t.deps.database.db.transaction().execute((trx) => createPoamItems(trx, t.deps, actor, s, items));

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  scope = { tenantId: tenant.id, workspaceId: tenant.defaultWorkspaceId };
});
afterAll(() => t.close());

describe('createPoamItems', () => {
  it('creates open items numbered POAM-1.. per tenant, with the default completion, the creation comment and audit entries', async () => {
    const items = await create([input(), input({ severity: 'CRITICAL', milestones: [{ date: '2026-12-01', description: 'Collect records' }] })]);
    expect(items.map((i) => i.id)).toEqual(['POAM-1', 'POAM-2']);
    expect(items[0]).toMatchObject({
      status: 'open',
      control_ids: ['AT-2', 'nist-800-171:3.2.1'],
      scheduled_completion: '2027-02-21', // 2026-11-23 + 90 days
      source: 'assessment:a-1',
      finding_id: null,
      vendor_dependency: false,
      deviation_request: null,
      evidence_ids: [],
      overdue: false,
    });
    expect(items[1]!.scheduled_completion).toBe('2026-12-08'); // + 15 days
    expect(items[1]!.milestones).toEqual([{ date: '2026-12-01', description: 'Collect records', done: false }]);
    expect(items[0]!.comments).toEqual([
      { at: t.clock.now().toISOString(), author: 'assessor-1', text: 'Item created (source: assessment:a-1)', status_from: null, status_to: 'open' },
    ]);
    const audit = await t.deps.database.db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', tenant.id).where('action', '=', 'poam.created').execute();
    expect(audit.map((a) => a.target_id).sort()).toEqual(['POAM-1', 'POAM-2']);
    expect(audit[0]!.actor_name).toBe('assessor-1');
    // Another tenant starts at 1.
    const theirs = await create([input()], { tenantId: other.id, workspaceId: other.defaultWorkspaceId });
    expect(theirs[0]!.id).toBe('POAM-1');
  });

  it('rolls back with the caller: nothing is created and the numbers are not consumed', async () => {
    await expect(
      t.deps.database.db.transaction().execute(async (trx) => {
        await createPoamItems(trx, t.deps, actor, scope, [input()]);
        throw new Error('caller failed');
      }),
    ).rejects.toThrow('caller failed');
    const [next] = await create([input()]);
    expect(next!.id).toBe('POAM-3');
  });

  it('400 names the bad field and item; 404 for an unknown finding', async () => {
    await expect(create([input(), input({ severity: 'INFO' as never })])).rejects.toMatchObject({ status: 400, message: expect.stringContaining('items[1].severity') });
    await expect(create([input({ control_ids: ['XX-1'] })])).rejects.toMatchObject({ status: 400, message: expect.stringContaining('control_ids') });
    await expect(create([input({ scheduled_completion: '2026-02-30' })])).rejects.toMatchObject({ status: 400 });
    await expect(create([input({ finding_id: 'no-such-rule:aws:us-east-1:aws.s3.bucket:x' })])).rejects.toMatchObject({ status: 404 });
  });

  it('concurrent creators get distinct consecutive numbers', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => create([input(), input()])));
    const ids = results.flat().map((i) => Number(i.id.slice(5)));
    expect(new Set(ids).size).toBe(16);
    expect(Math.max(...ids) - Math.min(...ids)).toBe(15);
    for (const pair of results) expect(Number(pair[1]!.id.slice(5))).toBe(Number(pair[0]!.id.slice(5)) + 1);
  });
});
