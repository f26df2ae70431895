import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, type TenantFixture } from '../harness/identity.js';
import { syncFindings, type DesiredFinding, type HostResource } from '../../src/modules/compliance/index.js';

/**
 * Findings written by the host agents refer to their text in finding_texts (migration 0017), like
 * the audit's. A text is never updated in place: a finding whose content changes refers to a new
 * text, and reads show the new content; findings with the same content share one text.
 */

let t: TestApp;
let tenant: TenantFixture;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
});
afterAll(() => t.close());

const resource = (name: string): HostResource => ({ id: `host:local:host.os.instance:${name}`, type: 'host.os.instance', name, region: 'local', account_id: '' });

const desired = (description: string): DesiredFinding => ({
  rule_id: 'agent-vuln-openssl',
  framework: 'nist-800-53',
  control_id: 'RA-5',
  framework_mappings: [{ framework: 'soc2', control_id: 'CC7.1' }],
  base_severity: 'HIGH',
  severity: 'HIGH',
  title: 'openssl 3.0.1 has known vulnerabilities',
  description,
  remediation: 'Upgrade openssl to 3.0.7 or later.',
  cve_ids: ['CVE-2022-3602'],
  tags: ['vulnerability'],
  details: {},
});

async function sync(host: HostResource, finding: DesiredFinding) {
  const scope = { tenantId: tenant.id, workspaceId: tenant.defaultWorkspaceId };
  await t.deps.database.db.transaction().execute((trx) => syncFindings(trx, scope, t.clock.now(), host, [finding], { rules: { ids: [finding.rule_id] }, resolveMissing: true }));
}

const read = (host: HostResource) =>
  t.deps.database.db
    .selectFrom('findings')
    .select(['title', 'description', 'remediation', 'framework_mappings', 'text_id'])
    .where('workspace_id', '=', tenant.defaultWorkspaceId)
    .where('resource_id', '=', host.id)
    .executeTakeFirstOrThrow();

const storedTexts = async () =>
  (await t.deps.database.db.selectFrom('finding_texts').select('description').where('workspace_id', '=', tenant.defaultWorkspaceId).orderBy('description').execute()).map(
    (r) => r.description,
  );

describe('finding texts of agent findings', () => {
  it('shares one text between equal findings, and a changed content refers to a new text', async () => {
    const a = resource('web-1');
    const b = resource('web-2');
    await sync(a, desired('Remote code execution in the X.509 parser.'));
    await sync(b, desired('Remote code execution in the X.509 parser.'));
    expect(await storedTexts()).toEqual(['Remote code execution in the X.509 parser.']);
    expect((await read(a)).text_id).toBe((await read(b)).text_id);

    await sync(a, desired('Buffer overflows in the X.509 email address checks.'));
    expect(await read(a)).toMatchObject({
      title: 'openssl 3.0.1 has known vulnerabilities',
      description: 'Buffer overflows in the X.509 email address checks.',
      remediation: 'Upgrade openssl to 3.0.7 or later.',
      framework_mappings: [{ framework: 'soc2', control_id: 'CC7.1' }],
    });
    // The other finding keeps the text it had.
    expect((await read(b)).description).toBe('Remote code execution in the X.509 parser.');
    expect(await storedTexts()).toEqual(['Buffer overflows in the X.509 email address checks.', 'Remote code execution in the X.509 parser.']);
  });
});
