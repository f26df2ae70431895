import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HostRuleError, loadHostRules } from '../../src/modules/agents/host-rules.js';

/**
 * Host rules carry a failure wording and one or two primary NIST controls like the AWS rules (issue 22
 * items 1 and 3): the loader refuses a rule without them, and counts only the primary NIST controls.
 */
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const rule = (overrides: Record<string, unknown> = {}) => ({
  id: 'host-demo',
  title: 'Demo setting is on',
  description: 'Checks the demo setting.',
  finding_title: 'Demo setting is off',
  finding_description: 'The demo setting is off.',
  severity: 'LOW',
  framework: 'nist-800-53',
  control_id: 'CM-7',
  nist_controls: [{ control_id: 'CM-7', source: 'compliance-as-code' }],
  cac_rules: ['rsyslog_nolisten'],
  framework_mappings: [
    { framework: 'nist-800-53', control_id: 'CM-6' },
    { framework: 'soc2', control_id: 'CC6.6' },
  ],
  collection: 'listening_ports',
  condition: 'item.port == 1',
  when_missing: 'unknown',
  when_missing_source: 'listening_ports not collected: the sockets are not known',
  remediation: { summary: 'Fix it.', steps: [{ action: 'Fix', command: 'true' }] },
  ...overrides,
});
const template = (id: string, kind: string) => ({
  ...rule({ id, kind, finding_title: `{path} ${id}` }),
  collection: undefined,
  condition: undefined,
  when_missing: undefined,
  when_missing_source: undefined,
});

function load(first: Record<string, unknown>) {
  dir = mkdtempSync(join(tmpdir(), 'host-rules-'));
  const rules = [first, template('host-vuln-demo', 'vulnerable-package'), template('host-drift-demo', 'config-drift')];
  writeFileSync(join(dir, 'demo.yml'), JSON.stringify({ rules: rules.map((r) => JSON.parse(JSON.stringify(r))) }));
  return loadHostRules(dir);
}
const error = (overrides: Record<string, unknown>) => {
  try {
    load(rule(overrides));
  } catch (e) {
    expect(e).toBeInstanceOf(HostRuleError);
    return (e as Error).message;
  }
  throw new Error('expected the load to fail');
};

describe('host rule finding texts and primary NIST controls', () => {
  it('loads them, counting only the primary NIST controls (the rest are related)', () => {
    const [demo] = load(rule()).conditions;
    expect(demo).toMatchObject({ finding_title: 'Demo setting is off', nist_controls: [{ control_id: 'CM-7', source: 'compliance-as-code' }], cac_rules: ['rsyslog_nolisten'] });
    expect(demo!.framework_mappings).toEqual([{ framework: 'soc2', control_id: 'CC6.6' }]);
    expect(demo!.related_mappings).toEqual([{ framework: 'nist-800-53', control_id: 'CM-6' }]);
  });

  it('refuses a missing or repeated finding title, and missing, too many, unknown or uncited-primary NIST controls', () => {
    expect(error({ finding_title: undefined })).toMatch(/host-demo\): finding_title is required$/);
    expect(error({ finding_title: 'demo setting is ON' })).toMatch(/finding_title must word the failure, not repeat the title$/);
    expect(error({ finding_title: 'x'.repeat(201) })).toMatch(/finding_title must be one line of at most 200 characters$/);
    expect(error({ finding_description: undefined })).toMatch(/finding_description is required$/);
    expect(error({ nist_controls: undefined })).toMatch(/nist_controls must list one or two \{control_id, source\}$/);
    const three = ['CM-7', 'CM-6', 'SC-7'].map((control_id) => ({ control_id, source: 'compliance-as-code' }));
    expect(error({ nist_controls: three })).toMatch(/nist_controls must list one or two/);
    expect(error({ nist_controls: [{ control_id: 'XX-99', source: 'compliance-as-code' }] })).toMatch(
      /control nist-800-53 XX-99 is not in content\/frameworks\/nist-800-53\.json$/,
    );
    expect(error({ nist_controls: [{ control_id: 'CM-7', source: 'guesswork' }] })).toMatch(
      /source must be one of prowler, aws-security-hub, compliance-as-code \(got "guesswork"\)$/,
    );
    expect(error({ nist_controls: [{ control_id: 'CM-6', source: 'compliance-as-code' }] })).toMatch(/the primary control nist-800-53 CM-7 must be one of nist_controls$/);
    expect(error({ cac_rules: ['Not A Rule'] })).toMatch(/cac_rules must be a list of ComplianceAsCode rule ids$/);
  });
});

describe('host rules fail closed (issue 22 item 2)', () => {
  it('require when_missing with its source on condition rules, and judge a host lacking the data by it', async () => {
    expect(error({ when_missing: undefined })).toContain('when_missing is required');
    expect(error({ when_missing: 'skip' })).toContain('when_missing must be one of violation, pass, unknown (got "skip")');
    expect(error({ when_missing_source: undefined })).toContain('when_missing_source is required');
    expect(error({ missing: 'host.' })).toContain('missing: does not compile');
    const { evaluateRule } = await import('../../src/modules/agents/host-rules.js');
    const judged = (when_missing: string) => {
      const [demo] = load(rule({ when_missing, missing: 'host.collectors.listening_ports.status != "ok"' })).conditions;
      return {
        notCollected: evaluateRule(demo!, { host: {}, collected: new Set() }),
        partial: evaluateRule(demo!, { host: { listening_ports: [], collectors: { listening_ports: { status: 'partial' } } }, collected: new Set(['listening_ports']) }),
        complete: evaluateRule(demo!, { host: { listening_ports: [], collectors: { listening_ports: { status: 'ok' } } }, collected: new Set(['listening_ports']) }),
      };
    };
    expect(judged('unknown')).toEqual({
      notCollected: { state: 'not_evaluated', reason: 'not collected: listening_ports', missing: ['listening_ports'], error: false },
      partial: {
        state: 'not_evaluated',
        reason: expect.stringContaining('the host lacks what the rule judges'),
        missing: ['host.collectors.listening_ports.status != "ok"'],
        error: false,
      },
      complete: { state: 'compliant' },
    });
    expect(judged('violation').partial).toMatchObject({ state: 'violated' });
    expect(judged('pass').notCollected).toEqual({ state: 'compliant' });
  });

  it('every shipped condition rule declares when_missing with a source', () => {
    for (const rule of loadHostRules().conditions) {
      expect(rule.when_missing, rule.id).toMatch(/^(violation|pass|unknown)$/);
      expect(rule.when_missing_source.length, rule.id).toBeGreaterThan(20);
    }
  });
});
