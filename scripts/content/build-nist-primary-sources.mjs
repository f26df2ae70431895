#!/usr/bin/env node
// Builds content/frameworks/nist-800-53-primary-sources.json: the public mappings a rule's primary
// NIST SP 800-53 rev5 controls (`nist_controls`) may be cited from besides Prowler's (which is in
// crosswalk.json). See content/frameworks/README.md for provenance and content/rules/README.md for use.
//
//   node scripts/content/build-nist-primary-sources.mjs <aws-security-hub-user-guide> <aws-config-rules> <ComplianceAsCode-content>
//
// Each argument is a local git clone of the named GitHub repository (awsdocs/aws-security-hub-user-guide,
// awslabs/aws-config-rules, ComplianceAsCode/content); files are read at the commits pinned below with
// `git show`, so the output does not depend on what the clones have checked out.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const [securityHubRepo, configRulesRepo, cacRepo] = process.argv.slice(2);
if (!securityHubRepo || !configRulesRepo || !cacRepo) {
  console.error('usage: build-nist-primary-sources.mjs <aws-security-hub-user-guide clone> <aws-config-rules clone> <ComplianceAsCode content clone>');
  process.exit(2);
}

// The last commit of the Security Hub guide that has the controls reference (the next one archived
// the repository and deleted doc_source/).
const SECURITY_HUB_COMMIT = 'bda5bf7ddbdf498557b2ac6a538577528004e6d5';
const CONFIG_RULES_COMMIT = 'b54d4a6c99e105c25ca46af9305770e4ba51c422';
const CONFORMANCE_PACK = 'aws-config-conformance-packs/Operational-Best-Practices-for-NIST-800-53-rev-5.yaml';
const CAC_COMMIT = 'b3a2cca9352cbcefb7f00d770bfd6f679da18d6a';
// The ComplianceAsCode rules the host rules cite (content/rules/host/*.yml `cac_rules`).
const CAC_RULES = [
  'sshd_disable_root_login',
  'sshd_disable_empty_passwords',
  'no_empty_passwords',
  'accounts_no_uid_except_zero',
  'file_permissions_unauthorized_world_writable',
  'set_iptables_default_rule',
  'set_ip6tables_default_rule',
  'postfix_network_listening_disabled',
  'rsyslog_nolisten',
  'aide_periodic_cron_checking',
  'security_patches_up_to_date',
];

const git = (repo, ...args) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
const unescape = (s) => s.replace(/\\(.)/g, '$1');

const catalog = JSON.parse(readFileSync(join(root, 'content', 'frameworks', 'nist-800-53.json'), 'utf8'));
const controls = new Map(catalog.controls.map((c) => [c.id, c]));

// --- AWS Security Hub: NIST.800-53.r5 related requirements of each control, by AWS Config rule.
const controlFiles = git(securityHubRepo, 'ls-tree', '--name-only', SECURITY_HUB_COMMIT, 'doc_source/')
  .split('\n')
  .filter((f) => f.endsWith('-controls.md') && !f.includes('securityhub-standards'));
const byConfigRule = new Map();
for (const file of controlFiles) {
  const text = git(securityHubRepo, 'show', `${SECURITY_HUB_COMMIT}:${file}`);
  for (const section of text.split(/^## /m).slice(1)) {
    const heading = /^\\\[([A-Za-z0-9\\.]+)\\\] (.*?)<a name/.exec(section);
    if (!heading) continue;
    const id = unescape(heading[1]);
    const related = /\*\*Related requirements:\*\*(.*)/.exec(section)?.[1] ?? '';
    const nist = [...unescape(related).matchAll(/NIST\.800-53\.r5 ([A-Z]{2}-\d+(?:\(\d+\))?)/g)].map((m) => m[1]);
    const ruleLine = /\*\*AWS Config rule: ?\*\*(.*)/.exec(section)?.[1] ?? '';
    // A link to the rule's page, or its name in backticks (rules Security Hub developed itself).
    const line = unescape(ruleLine);
    const linked = [...line.matchAll(/developerguide\/([a-z0-9-]+?)(?:\.html)?\)/g)].map((m) => m[1]);
    const named = [...line.matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]);
    const rules = [...new Set([...linked, ...named])];
    if (nist.length === 0) continue;
    for (const rule of rules) {
      const entry = byConfigRule.get(rule) ?? { security_hub_controls: [], nist: [] };
      entry.security_hub_controls.push(id);
      for (const n of nist) if (!entry.nist.includes(n)) entry.nist.push(n);
      byConfigRule.set(rule, entry);
    }
  }
}

// --- AWS Config's NIST 800-53 rev 5 conformance pack: which Config rules it deploys (no control ids).
const pack = git(configRulesRepo, 'show', `${CONFIG_RULES_COMMIT}:${CONFORMANCE_PACK}`);
const packRules = new Set([...pack.matchAll(/ConfigRuleName: ([a-z0-9-]+)/g)].map((m) => m[1]));

const awsConfigRules = {};
for (const rule of [...byConfigRule.keys()].sort()) {
  const entry = byConfigRule.get(rule);
  const unknown = entry.nist.filter((id) => !controls.has(id));
  if (unknown.length) throw new Error(`${rule}: NIST ids not in the catalog: ${unknown.join(', ')}`);
  awsConfigRules[rule] = {
    security_hub_controls: entry.security_hub_controls,
    nist: entry.nist.sort(compareIds),
    in_nist_800_53_rev5_conformance_pack: packRules.has(rule),
  };
}

// --- ComplianceAsCode: the `nist` references of each cited rule.
const cacPaths = git(cacRepo, 'ls-tree', '-r', '--name-only', CAC_COMMIT, 'linux_os/guide').split('\n');
const cacRules = {};
for (const name of CAC_RULES) {
  const path = cacPaths.find((p) => p.endsWith(`/${name}/rule.yml`));
  if (!path) throw new Error(`ComplianceAsCode rule ${name} not found`);
  const text = git(cacRepo, 'show', `${CAC_COMMIT}:${path}`);
  const references = /^ {4}nist: (.*)$/m.exec(text)?.[1]?.trim();
  if (!references) throw new Error(`${name}: no nist references`);
  const title = /^title: '?(.*?)'?$/m.exec(text)?.[1];
  const nist = [];
  const normalised = [];
  for (const raw of references.split(',').map((s) => s.trim())) {
    // Statement parts are dropped (AC-17(a) is AC-17, IA-5(1)(a) is IA-5(1)); a control withdrawn in rev5
    // is replaced by the one it was incorporated into (CA-3(5) -> SC-7(5)).
    const base = /^([A-Z]{2}-\d+(?:\(\d+\))?)/.exec(raw)?.[1];
    if (!base) continue;
    let id = base;
    const control = controls.get(base);
    if (!control) throw new Error(`${name}: ${raw} is not in the catalog`);
    if (control.withdrawn) {
      const into = control.incorporatedInto ?? control.movedTo;
      if (!into?.length) continue;
      id = into[0];
      normalised.push(`${raw} -> ${id} (withdrawn in rev5, incorporated into ${id})`);
    } else if (base !== raw) {
      normalised.push(`${raw} -> ${base}`);
    }
    if (!nist.includes(id)) nist.push(id);
  }
  cacRules[name] = { title, path, references, nist: nist.sort(compareIds), ...(normalised.length ? { normalised } : {}) };
}

function compareIds(a, b) {
  const key = (id) => {
    const m = /^([A-Z]{2})-(\d+)(?:\((\d+)\))?$/.exec(id);
    return [m[1], Number(m[2]), m[3] === undefined ? -1 : Number(m[3])];
  };
  const [x, y] = [key(a), key(b)];
  return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] - y[1] || x[2] - y[2];
}

const out = {
  sources: {
    'aws-security-hub': {
      title: 'AWS Security Hub controls reference: NIST SP 800-53 Rev. 5 related requirements of each control and the AWS Config rule it evaluates',
      url: `https://github.com/awsdocs/aws-security-hub-user-guide/tree/${SECURITY_HUB_COMMIT}/doc_source`,
      repository: 'awsdocs/aws-security-hub-user-guide',
      paths: ['doc_source/*-controls.md'],
      commit: SECURITY_HUB_COMMIT,
      commitDate: '2023-03-10',
      license: 'CC-BY-SA-4.0 (repository LICENSE); this file, an adaptation of that data, is shared under the same licence',
      transformation:
        'For every control with NIST.800-53.r5 related requirements, each AWS Config rule named on its "AWS Config rule" line maps to those NIST ids (union over the controls that evaluate the same Config rule). Ids are as written (AC-2, SC-7(5)); every id exists in nist-800-53.json.',
    },
    'aws-config-conformance-pack': {
      title: 'AWS Config conformance pack "Operational Best Practices for NIST 800-53 rev 5"',
      url: `https://github.com/awslabs/aws-config-rules/blob/${CONFIG_RULES_COMMIT}/${CONFORMANCE_PACK}`,
      repository: 'awslabs/aws-config-rules',
      path: CONFORMANCE_PACK,
      commit: CONFIG_RULES_COMMIT,
      license: 'CC0-1.0 (repository LICENSE)',
      transformation:
        'The pack template lists the AWS Config rules it deploys (ConfigRuleName) and carries no control ids (its control table is on the AWS documentation site only); `in_nist_800_53_rev5_conformance_pack` says whether a Config rule is one of them.',
    },
    'compliance-as-code': {
      title: 'ComplianceAsCode rule references (NIST SP 800-53)',
      url: `https://github.com/ComplianceAsCode/content/tree/${CAC_COMMIT}/linux_os/guide`,
      repository: 'ComplianceAsCode/content',
      paths: CAC_RULES.map((name) => cacRules[name].path),
      commit: CAC_COMMIT,
      license: 'BSD-3-Clause (repository LICENSE)',
      transformation:
        'The `references: nist:` line of each rule.yml, split at commas. Statement parts are dropped (AC-17(a) -> AC-17, IA-5(1)(a) -> IA-5(1)); a control withdrawn in rev5 is replaced by the control it was incorporated into per nist-800-53.json (CA-3(5) -> SC-7(5)).',
    },
  },
  aws_config_rules: awsConfigRules,
  compliance_as_code_rules: cacRules,
};
const target = join(root, 'content', 'frameworks', 'nist-800-53-primary-sources.json');
writeFileSync(target, JSON.stringify(out, null, 2) + '\n');
console.log(
  `wrote ${target}: ${Object.keys(awsConfigRules).length} AWS Config rules (${[...packRules].filter((r) => awsConfigRules[r]).length} in the conformance pack), ${CAC_RULES.length} ComplianceAsCode rules`,
);
