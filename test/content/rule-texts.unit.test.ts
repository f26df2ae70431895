import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../src/platform/paths.js';
import { loadBuiltinRules } from '../../src/modules/compliance/rules/content-loader.js';
import { builtinRules, generatedFindingTitle, ruleControls } from '../../src/modules/compliance/rule-catalog.js';
import { nistControlsOf } from '../../src/modules/compliance/rules/primary-controls.js';
import { loadHostRules } from '../../src/modules/agents/host-rules.js';
import type { NistControl } from '../../src/modules/compliance/rules/rule-types.js';

/**
 * Issue 22 items 1 and 3: every rule's findings say what is wrong (a failure wording different from
 * the check's title), and every rule names one or two primary NIST SP 800-53 rev5 controls, each
 * cited by the public mapping it names for the rule's Prowler checks, AWS Config rules or
 * ComplianceAsCode rules. Only those count in NIST; the FedRAMP POA&M column holds them only.
 */

const aws = loadBuiltinRules();
const host = loadHostRules().all;
const catalog = new Map(
  (
    JSON.parse(readFileSync(projectPath('content', 'frameworks', 'nist-800-53.json'), 'utf8')) as { controls: Array<{ id: string; title: string; withdrawn?: boolean }> }
  ).controls.map((c) => [c.id, c]),
);
const crosswalk = (JSON.parse(readFileSync(projectPath('content', 'frameworks', 'crosswalk.json'), 'utf8')) as { checks: Record<string, { 'nist-800-53': string[] }> }).checks;
const sources = JSON.parse(readFileSync(projectPath('content', 'frameworks', 'nist-800-53-primary-sources.json'), 'utf8')) as {
  sources: Record<string, { repository: string; commit: string; license: string }>;
  aws_config_rules: Record<string, { nist: string[]; security_hub_controls: string[] }>;
  compliance_as_code_rules: Record<string, { nist: string[] }>;
};

interface Cited {
  id: string;
  title: string;
  finding_title: string;
  nist_controls: NistControl[];
  prowler_checks?: string[];
  aws_config_rules?: string[];
  cac_rules?: string[];
}
const all: Cited[] = [...aws, ...host];

/** Is the control listed by the named mapping for one of the rule's checks / Config rules / ComplianceAsCode rules? */
function cited(rule: Cited, c: NistControl): boolean {
  if (c.source === 'prowler') return (rule.prowler_checks ?? []).some((check) => crosswalk[check]?.['nist-800-53'].includes(c.control_id));
  if (c.source === 'aws-security-hub') return (rule.aws_config_rules ?? []).some((r) => sources.aws_config_rules[r]?.nist.includes(c.control_id));
  return (rule.cac_rules ?? []).some((r) => sources.compliance_as_code_rules[r]?.nist.includes(c.control_id));
}

describe('finding texts', () => {
  it('every AWS and host rule words its findings as the failure, never as its check title', () => {
    expect(aws.length).toBeGreaterThanOrEqual(80);
    expect(host.length).toBeGreaterThanOrEqual(9);
    const same = all.filter((r) => r.finding_title.trim().toLowerCase() === r.title.trim().toLowerCase()).map((r) => r.id);
    expect(same).toEqual([]);
    for (const rule of all) expect(rule.finding_title.length, rule.id).toBeLessThanOrEqual(200);
  });

  it("the issue's examples read as failures", () => {
    const byId = new Map(all.map((r) => [r.id, r]));
    expect(byId.get('aws-rds-instance-storage-encrypted')!.finding_title).toBe('RDS DB instance storage is not encrypted');
    expect(byId.get('host-account-empty-password')!.finding_title).toBe('Local account has an empty password');
    expect(byId.get('host-ssh-root-login')!.finding_title).toBe('SSH permits root login');
    expect(byId.get('aws-ec2-sg-no-ingress-from-internet')!.finding_title).toBe('Security group allows ingress from the Internet');
  });

  it('the catalog gives findings the failure wording and a custom rule without one "Fails: <title>"', () => {
    for (const rule of builtinRules()) expect(rule.finding_title, rule.id).toBe(rule.definition!.finding_title);
    expect(generatedFindingTitle('Bucket has an owner tag')).toBe('Fails: Bucket has an owner tag');
  });
});

describe('primary NIST controls', () => {
  it('every rule has one or two, in the catalog, each cited by the mapping it names', () => {
    const problems: string[] = [];
    for (const rule of all) {
      if (rule.nist_controls.length < 1 || rule.nist_controls.length > 2) problems.push(`${rule.id}: ${rule.nist_controls.length} primary NIST controls`);
      for (const c of rule.nist_controls) {
        const control = catalog.get(c.control_id);
        if (!control || control.withdrawn) problems.push(`${rule.id}: ${c.control_id} is not a current control of nist-800-53.json`);
        if (!cited(rule, c))
          problems.push(
            `${rule.id}: ${c.control_id} is not listed by ${c.source} for the rule's ${c.source === 'prowler' ? 'Prowler checks' : c.source === 'aws-security-hub' ? 'AWS Config rules' : 'ComplianceAsCode rules'}`,
          );
      }
    }
    expect(problems).toEqual([]);
  });

  it('the citation sources are recorded with repository, commit and licence', () => {
    for (const name of ['aws-security-hub', 'aws-config-conformance-pack', 'compliance-as-code']) {
      expect(sources.sources[name], name).toMatchObject({ repository: expect.any(String), commit: expect.stringMatching(/^[0-9a-f]{40}$/), license: expect.any(String) });
    }
  });

  it('only primary NIST controls fail: no long tail such as AC-4(28) for IMDSv2 or SC-7(26) for security groups', () => {
    for (const rule of builtinRules()) {
      const nist = ruleControls(rule)
        .filter((m) => m.framework === 'nist-800-53')
        .map((m) => m.control_id);
      expect(new Set(nist), rule.id).toEqual(new Set(rule.definition!.nist_controls.map((c) => c.control_id)));
    }
    const imds = builtinRules().find((r) => r.id === 'aws-ec2-instance-imdsv2-required')!;
    expect(ruleControls(imds).map((m) => `${m.framework} ${m.control_id}`)).not.toContain('nist-800-53 AC-4(28)');
    expect(imds.related_mappings).toContainEqual({ framework: 'nist-800-53', control_id: 'AC-4(28)' });
    for (const sg of builtinRules().filter((r) => r.resource_type === 'aws.ec2.security_group')) {
      expect(
        ruleControls(sg).map((m) => m.control_id),
        sg.id,
      ).not.toContain('SC-7(26)');
    }
    for (const rule of host) {
      expect(new Set(nistControlsOf(rule)), rule.id).toEqual(new Set(rule.nist_controls.map((c) => c.control_id)));
    }
  });

  it("the POA&M NIST column of any built-in finding holds only its primary NIST ids, never another framework's", () => {
    for (const rule of [...builtinRules(), ...host]) {
      const column = nistControlsOf(rule);
      expect(column.length, rule.id).toBeGreaterThanOrEqual(1);
      expect(column.length, rule.id).toBeLessThanOrEqual(2);
      for (const id of column) expect(id, rule.id).toMatch(/^[A-Z]{2}-\d+(\(\d+\))?$/);
    }
    // A rule whose own framework is CIS (the issue's `cis-aws:3.1.4`) still gets NIST ids only.
    const bucket = builtinRules().find((r) => r.id === 'aws-s3-bucket-public-access-block')!;
    expect(bucket.framework).toBe('cis-aws');
    expect(nistControlsOf(bucket)).toEqual(['AC-3', 'AC-21']);
  });

  it("content/rules/README.md lists every rule's primary NIST controls and their mapping (scripts/content/nist-table.mjs --check)", () => {
    expect(() => execFileSync(process.execPath, [projectPath('scripts', 'content', 'nist-table.mjs'), '--check'], { stdio: 'pipe' })).not.toThrow();
    const readme = readFileSync(projectPath('content', 'rules', 'README.md'), 'utf8');
    for (const rule of all) expect(readme, rule.id).toContain(`| \`${rule.id}\` |`);
  });
});
