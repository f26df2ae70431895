import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, events, fixtureNode } from '../harness/compliance.js';
import { builtinRule } from '../../src/modules/compliance/rule-catalog.js';
import { CORE_FRAMEWORKS, FRAMEWORKS } from '../../src/modules/compliance/rules/rule-types.js';

let t: TestApp;
let tenant: TenantFixture;
let token: string;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  token = tenant.users['security-analyst'].token;
});
afterAll(() => t.close());

const status = (query = '') => call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/controls/status${query}` });
const gaps = (query = '') => call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/controls/gaps${query}` });
const RULE = 'aws-kms-key-rotation-enabled';
/** A rule's mappings in the frameworks a tenant has on by default (the Prowler-carried ones are off). */
const enabledMappings = (rule: { framework_mappings: Array<{ framework: string; control_id: string }> }) =>
  rule.framework_mappings.filter((m) => (CORE_FRAMEWORKS as readonly string[]).includes(m.framework));

describe('controls status', () => {
  it('starts at 100 with no findings', async () => {
    const res = await status();
    expect(res.statusCode).toBe(200);
    const { controls, by_framework: byFramework, ...summary } = res.json();
    // Per framework, every applicable control passes: the counts add up to applicable_controls.
    expect(Object.keys(byFramework)).toEqual(['nist-800-53', 'cis-aws', 'pci-dss', 'soc2']);
    for (const counts of Object.values(byFramework) as Array<Record<string, number>>) {
      expect(counts).toEqual({
        score: 100,
        findings: 0,
        applicable_controls: counts.passing_controls,
        passing_controls: counts.applicable_controls,
        failing_controls: 0,
        unknown_controls: 0,
        not_attested_controls: 0,
        not_assessed_controls: expect.any(Number),
      });
      expect(counts.applicable_controls).toBeGreaterThan(0);
    }
    expect(summary).toEqual({
      overall_score: 100,
      total_findings: 0,
      by_severity: { CRITICAL: 0, HIGH: 0, MEDIUM: 0, LOW: 0, INFO: 0 },
      unknown: { controls: 0, evaluations: 0, resources: 0 },
      attestations: { not_assessed: 0, questionnaire_assigned: 0, in_progress: 0, submitted: 0, changes_requested: 0, attested: 0, expiring_soon: 0 },
      sla: { overdue: 0, due_soon: 0 },
    });
    // Every rule-mapped control, paged (50 by default), passing by its rules, never assessed.
    expect(controls).toMatchObject({ page: 1, per_page: 50 });
    expect(controls.total).toBeGreaterThan(50);
    expect(controls.items).toHaveLength(50);
    for (const c of controls.items) expect(c).toMatchObject({ automated_state: 'passing', attestation_status: 'not_assessed', attestation_expires_at: null, passing: true });
  });

  it('a new violation fails its controls: control_failed events, lower scores, score_changed when a framework moves 5+ points', async () => {
    const rule = builtinRule(RULE)!;
    await putNodes(t, token, tenant.id, [fixtureNode(RULE, 'violating', 'key-1')]);
    const { run } = await audit(t, token, tenant.id);
    const body = (await status()).json();
    expect(body.total_findings).toBe(1);
    expect(body.by_severity[rule.severity]).toBe(1);
    const failed = await events(t, tenant.id, 'compliance.control_failed');
    const controls = [{ framework: rule.framework, control_id: rule.control_id }, ...enabledMappings(rule)];
    expect(failed.map((e) => `${(e.data as any).framework}/${(e.data as any).control_id}`).sort()).toEqual(controls.map((c) => `${c.framework}/${c.control_id}`).sort());
    expect(failed[0]!.data).toMatchObject({ triggered_by: run.job_id, title: expect.any(String) });
    for (const fw of new Set(controls.map((c) => c.framework))) {
      expect(body.by_framework[fw].findings).toBe(1);
      expect(body.by_framework[fw].score).toBeLessThan(100);
    }
    const scoreEvents = await events(t, tenant.id, 'compliance.score_changed');
    for (const e of scoreEvents) {
      const data = e.data as any;
      expect(Math.abs(data.delta)).toBeGreaterThanOrEqual(5);
      expect(data).toMatchObject({ previous_score: 100, current_score: data.previous_score + data.delta, triggered_by: run.job_id });
      expect(data.current_score).toBe(data.framework === 'overall' ? body.overall_score : body.by_framework[data.framework].score);
    }
    // A framework that moved 5 points or more reported it; one that moved less did not.
    for (const [fw, v] of Object.entries(body.by_framework) as Array<[string, { score: number }]>) {
      const reported = scoreEvents.some((e) => (e.data as any).framework === fw);
      expect(reported).toBe(100 - v.score >= 5);
    }
  });

  it('?framework= narrows the status; an unknown framework is 400', async () => {
    const rule = builtinRule(RULE)!;
    const res = (await status(`?framework=${rule.framework}`)).json();
    expect(Object.keys(res.by_framework)).toEqual([rule.framework]);
    expect(res.overall_score).toBe(res.by_framework[rule.framework].score);
    const unknown = await status('?framework=iso');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.message).toBe(`invalid querystring: /framework must be one of ${FRAMEWORKS.join(', ')} (got "iso")`);
  });

  it("gaps list the failing controls with their findings, counted for the rule's control and each control it maps to", async () => {
    const rule = builtinRule(RULE)!;
    await putNodes(t, token, tenant.id, [fixtureNode(RULE, 'violating', 'key-2')]);
    await audit(t, token, tenant.id);
    const res = await gaps(`?framework=${rule.framework}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().items).toContainEqual(
      expect.objectContaining({ framework: rule.framework, control_id: rule.control_id, status: 'failing', findings: 2, max_severity: rule.severity, automated: true }),
    );
    expect(enabledMappings(rule).length).toBeGreaterThan(0);
    for (const m of enabledMappings(rule)) {
      expect((await gaps(`?framework=${m.framework}`)).json().items, `${m.framework}/${m.control_id}`).toContainEqual(
        expect.objectContaining({ framework: m.framework, control_id: m.control_id, status: 'failing', findings: 2, max_severity: rule.severity }),
      );
    }
  });

  it('fixing the resources passes the controls again (control_passed)', async () => {
    await putNodes(t, token, tenant.id, [fixtureNode(RULE, 'compliant', 'key-1'), fixtureNode(RULE, 'compliant', 'key-2')]);
    await audit(t, token, tenant.id);
    expect((await status()).json()).toMatchObject({ overall_score: 100, total_findings: 0 });
    const passed = await events(t, tenant.id, 'compliance.control_passed');
    expect(passed.length).toBe((await events(t, tenant.id, 'compliance.control_failed')).length);
  });
});

describe('attested controls in the score', () => {
  it('a questionnaire-only control counts as applicable, passes while attested, and reverts when the attestation expires', async () => {
    const db = t.deps.database.db;
    const before = (await status('?framework=soc2')).json().overall_score;
    await db
      .insertInto('control_attestations')
      .values({
        tenant_id: tenant.id,
        workspace_id: tenant.defaultWorkspaceId,
        framework: 'soc2',
        control_id: 'CC1.1',
        status: 'questionnaire_assigned',
        updated_at: t.clock.now(),
      })
      .execute();
    const assignedStatus = (await status('?framework=soc2')).json();
    const assigned = assignedStatus.overall_score;
    expect(assigned).toBeLessThan(before);
    expect(assignedStatus.attestations).toMatchObject({ questionnaire_assigned: 1, attested: 0, expiring_soon: 0 });
    // Other frameworks' attestations are not counted under ?framework=.
    expect((await status('?framework=pci-dss')).json().attestations.questionnaire_assigned).toBe(0);
    expect((await gaps('?framework=soc2')).json().items).toContainEqual(
      expect.objectContaining({ control_id: 'CC1.1', status: 'not_attested', attestation_status: 'questionnaire_assigned', automated: false }),
    );
    // Expiring soon is the spec's 7-day stage, as in /controls/attestations: 20 days out is not, 5 days out is.
    const expiresIn = (days: number) =>
      db
        .updateTable('control_attestations')
        .set({ status: 'attested', attested_at: t.clock.now(), expires_at: new Date(t.clock.now().getTime() + days * 86_400_000) })
        .where('control_id', '=', 'CC1.1')
        .execute();
    await expiresIn(20);
    expect((await status('?framework=soc2')).json().attestations).toMatchObject({ attested: 1, expiring_soon: 0 });
    await expiresIn(5);
    expect((await status('?framework=soc2')).json().attestations).toMatchObject({ attested: 1, expiring_soon: 1 });
    await db
      .updateTable('control_attestations')
      .set({ status: 'attested', attested_at: t.clock.now(), expires_at: new Date(t.clock.now().getTime() + 86_400_000) })
      .where('control_id', '=', 'CC1.1')
      .execute();
    const attested = (await status('?framework=soc2')).json();
    expect(attested.overall_score).toBe(100);
    // Ends within a day: attested and expiring soon.
    expect(attested.attestations).toMatchObject({ questionnaire_assigned: 0, attested: 1, expiring_soon: 1 });
    expect((await gaps('?framework=soc2')).json().items.map((g: { control_id: string }) => g.control_id)).not.toContain('CC1.1');
    t.clock.advance(86_400_000 + 1);
    token = (await fresh(t, tenant.users['security-analyst'])).token;
    const expired = (await status('?framework=soc2')).json();
    expect(expired.overall_score).toBe(assigned);
    expect(expired.attestations).toMatchObject({ not_assessed: 1, attested: 0, expiring_soon: 0 });
  });
});

describe("each control's automated state and attestation status (contracts section 5)", () => {
  let other: TenantFixture;
  let analyst: string;
  const list = async (query: string) => {
    const res = await call(t.app, analyst, { url: `/api/v1/tenants/${other.id}/controls/status${query}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  beforeAll(async () => {
    other = await buildTenant(t);
    analyst = other.users['security-analyst'].token;
    await putNodes(t, analyst, other.id, [fixtureNode(RULE, 'violating', 'key-9')]);
    await audit(t, analyst, other.id);
    const now = t.clock.now();
    const base = { tenant_id: other.id, workspace_id: other.defaultWorkspaceId, framework: 'soc2', updated_at: now };
    await t.deps.database.db
      .insertInto('control_attestations')
      .values([
        { ...base, control_id: 'CC1.1', status: 'attested', attested_at: now, expires_at: new Date(now.getTime() + 20 * 86_400_000) },
        { ...base, control_id: 'CC1.2', status: 'in_progress' },
      ])
      .execute();
  });

  it('lists every applicable control with framework, control id, automated state, attestation status and expiry; the counts stay', async () => {
    const rule = builtinRule(RULE)!;
    const body = await list('?framework=soc2&per_page=500');
    expect(body.attestations).toMatchObject({ attested: 1, in_progress: 1, not_assessed: 0, expiring_soon: 0 });
    const items = body.controls.items as Array<Record<string, unknown>>;
    expect(body.controls.total).toBe(items.length);
    expect(items.every((c) => c.framework === 'soc2')).toBe(true);
    const byId = new Map(items.map((c) => [c.control_id, c]));
    expect(byId.get('CC1.1')).toEqual({
      framework: 'soc2',
      control_id: 'CC1.1',
      title: expect.any(String),
      family: expect.any(String),
      automated_state: 'not_automated',
      unknown_evaluations: 0,
      attestation_status: 'attested',
      attestation_expires_at: new Date(t.clock.now().getTime() + 20 * 86_400_000).toISOString(),
      expiring_soon: false,
      passing: true,
    });
    expect(byId.get('CC1.2')).toMatchObject({ automated_state: 'not_automated', attestation_status: 'in_progress', attestation_expires_at: null, passing: false });
    const failing = [rule, ...rule.framework_mappings].find((m) => m.framework === 'soc2')!;
    expect(byId.get(failing.control_id)).toMatchObject({ automated_state: 'failing', attestation_status: 'not_assessed', passing: false });
    // Ordered by control id, numerically (CC1.2 before CC1.10).
    const ids = items.map((c) => String(c.control_id));
    expect(ids).toEqual([...ids].sort((a, b) => a.localeCompare(b, 'en', { numeric: true })));
  });

  it('filters by status and automated_state, and pages', async () => {
    expect((await list('?framework=soc2&status=attested')).controls.items.map((c: { control_id: string }) => c.control_id)).toEqual(['CC1.1']);
    const failing = (await list('?automated_state=failing&per_page=500')).controls;
    expect(failing.total).toBeGreaterThan(1);
    expect(new Set(failing.items.map((c: { framework: string }) => c.framework)).size).toBeGreaterThan(1);
    for (const c of failing.items) expect(c).toMatchObject({ automated_state: 'failing', passing: false });
    const all = (await list('?framework=soc2&per_page=500')).controls;
    const page2 = (await list('?framework=soc2&per_page=2&page=2')).controls;
    expect(page2).toMatchObject({ total: all.total, page: 2, per_page: 2, total_pages: Math.ceil(all.total / 2) });
    expect(page2.items).toEqual(all.items.slice(2, 4));
    const bad = await call(t.app, analyst, { url: `/api/v1/tenants/${other.id}/controls/status?status=done` });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toBe(
      'invalid querystring: /status must be one of not_assessed, questionnaire_assigned, in_progress, submitted, changes_requested, attested (got "done")',
    );
  });

  it('gaps carry the attestation status, and are exactly the controls the status list reports as not passing', async () => {
    const gapItems = (await call(t.app, analyst, { url: `/api/v1/tenants/${other.id}/controls/gaps?framework=soc2&per_page=500`, expect: 200 })).json().items;
    expect(gapItems).toContainEqual(expect.objectContaining({ control_id: 'CC1.2', status: 'not_attested', attestation_status: 'in_progress', attestation_expires_at: null }));
    const notPassing = (await list('?framework=soc2&per_page=500')).controls.items.filter((c: { passing: boolean }) => !c.passing);
    expect(gapItems.map((g: Record<string, unknown>) => [g.control_id, g.attestation_status, g.status === 'failing' ? 'failing' : 'other'])).toEqual(
      notPassing.map((c: Record<string, unknown>) => [c.control_id, c.attestation_status, c.automated_state === 'failing' ? 'failing' : 'other']),
    );
  });
});
