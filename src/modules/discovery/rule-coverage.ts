import { readdirSync, readFileSync } from 'node:fs';
import { lookupTable } from '../../platform/lookup-table.js';
import { projectPath } from '../../platform/paths.js';
import { builtinRules, propertyModel, type Rule } from '../compliance/index.js';
import { MAPPED_TYPES } from './terraform-state.js';

/**
 * Which source can give each built-in rule the resources it evaluates (issue 27, item 3): the `aws`
 * plugin, the Terraform state plugin, or an AWS Config import. Built from the code and the content,
 * so docs/coverage.md (generated from it) and its test follow every new rule and every new type a
 * plugin reads. Used by the docs and their test only, never at run time.
 */

export type Provider = 'aws plugin' | 'Terraform state' | 'AWS Config import';

export interface RuleCoverage {
  rule: string;
  nodeType: string;
  configType: string | null;
  providers: Provider[];
  /** Why a provider that has the type cannot give what the rule reads. */
  notes: string[];
}

/**
 * Property paths only the aws plugin writes (content/aws-config-schema/SOURCES.md, "Additions", second
 * kind): an AWS Config item or a Terraform state never holds them, so a rule reading one is
 * provided by the aws plugin alone.
 */
export const PLUGIN_ONLY_PATHS = lookupTable<string>({
  'supplementaryConfiguration.CredentialReport': "IAM's credential report (GetCredentialReport), which neither AWS Config nor a Terraform state holds",
  'supplementaryConfiguration.TrailStatus': "CloudTrail's GetTrailStatus (is the trail logging), which neither AWS Config nor a Terraform state holds",
  'supplementaryConfiguration.EventSelectors': "CloudTrail's GetEventSelectors, which neither AWS Config nor a Terraform state holds",
  'supplementaryConfiguration.AdvancedEventSelectors': "CloudTrail's GetEventSelectors, which neither AWS Config nor a Terraform state holds",
});

/**
 * Resource types AWS Config has none for, which only the aws plugin writes (content/aws-config-schema/
 * additions.json defines their paths; SOURCES.md, "Additions", third kind): neither an AWS Config
 * import nor a Terraform state gives them.
 */
export const PLUGIN_ONLY_TYPES = lookupTable<string>({
  'AWS::IAM::AccountPasswordPolicy': "the account's IAM password policy (IAM GetAccountPasswordPolicy), for which AWS Config has no resource type",
});

const DISCOVERY_DIR = projectPath('src', 'modules', 'discovery');

/**
 * The aws plugin's source files: aws.ts and its per-service files (`aws-<service>.ts`), without the
 * replay of recorded responses and the tests.
 */
export function awsPluginFiles(): string[] {
  return readdirSync(DISCOVERY_DIR)
    .filter((f) => /^aws(-[a-z0-9-]+)?\.ts$/.test(f) && !/\.test\.ts$/.test(f) && f !== 'aws-replay.ts')
    .sort();
}

/**
 * The AWS Config types the aws plugin writes: the `configType` of every node it builds in aws.ts and
 * its per-service files. Read from the plugin's source, so a service added there shows here without a
 * list to keep.
 */
export function awsPluginConfigTypes(
  source = awsPluginFiles()
    .map((f) => readFileSync(`${DISCOVERY_DIR}/${f}`, 'utf8'))
    .join('\n'),
): string[] {
  return [...new Set([...source.matchAll(/configType:\s*'(AWS::[A-Za-z0-9]+::[A-Za-z0-9]+)'/g)].map((m) => m[1]!))].sort();
}

/** The AWS Config types the Terraform state plugin maps, with the Terraform resource types mapped to each. */
export function terraformConfigTypes(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [tfType, mapping] of Object.entries(MAPPED_TYPES)) out.set(mapping.configType, [...(out.get(mapping.configType) ?? []), tfType]);
  return out;
}

/** A rule reads a path only the aws plugin writes. */
function pluginOnlyReads(rule: Rule): string[] {
  const reads = rule.definition?.reads ?? [];
  return Object.entries(PLUGIN_ONLY_PATHS)
    .filter(([path]) => reads.some((r) => r === path || r.startsWith(`${path}.`)))
    .map(([, why]) => why);
}

export function ruleCoverage(rules: Rule[] = builtinRules()): RuleCoverage[] {
  const plugin = new Set(awsPluginConfigTypes());
  const terraform = terraformConfigTypes();
  const model = propertyModel();
  return rules.map((rule) => {
    const configType = rule.definition?.config_resource_type ?? null;
    const onlyPlugin = [...(configType && Object.hasOwn(PLUGIN_ONLY_TYPES, configType) ? [PLUGIN_ONLY_TYPES[configType]!] : []), ...pluginOnlyReads(rule)];
    const providers: Provider[] = [];
    const notes: string[] = [];
    if (configType && plugin.has(configType)) providers.push('aws plugin');
    // A path only the plugin writes rules out the other sources, even when they have the type.
    if (configType && terraform.has(configType) && onlyPlugin.length === 0) providers.push('Terraform state');
    if (configType && model.recordedByConfig(configType) && onlyPlugin.length === 0) providers.push('AWS Config import');
    if (onlyPlugin.length) notes.push(`reads ${onlyPlugin.join('; ')}`);
    return { rule: rule.id, nodeType: rule.resource_type, configType, providers, notes };
  });
}

/** The plugin's types AWS Config has none of, as the coverage doc names them. */
function ownTypes(): string {
  const own = awsPluginConfigTypes().filter((t) => Object.hasOwn(PLUGIN_ONLY_TYPES, t));
  if (own.length === 0) return 'all of them AWS Config types';
  return `AWS Config types and ${own.length === 1 ? 'one' : own.length} of ControlGraph's own that AWS Config has none for (${own.map((t) => `\`${t}\``).join(', ')})`;
}

const mark = (yes: boolean, detail = '') => (yes ? `yes${detail}` : '—');

function typeTable(rows: RuleCoverage[]): string[] {
  const plugin = new Set(awsPluginConfigTypes());
  const terraform = terraformConfigTypes();
  const byType = new Map<string, RuleCoverage[]>();
  for (const r of rows) byType.set(r.nodeType, [...(byType.get(r.nodeType) ?? []), r]);
  const lines = ['| Node type | AWS Config type | Rules | aws plugin | Terraform state | AWS Config import |', '|---|---|---|---|---|---|'];
  for (const [nodeType, list] of [...byType].sort(([a], [b]) => a.localeCompare(b))) {
    const configType = list[0]!.configType;
    const tf = configType ? terraform.get(configType) : undefined;
    const importable = list.some((r) => r.providers.includes('AWS Config import'));
    const notImported = list.filter((r) => !r.providers.includes('AWS Config import')).length;
    const partial = importable && notImported ? ` (${notImported} of the rules read what only the aws plugin writes)` : '';
    lines.push(
      `| \`${nodeType}\` | ${configType ? `\`${configType}\`${Object.hasOwn(PLUGIN_ONLY_TYPES, configType) ? " (ControlGraph's: AWS Config has no such type)" : ''}` : '—'} | ${list.length} | ${mark(configType !== null && plugin.has(configType))} | ${mark(tf !== undefined, tf ? ` (${tf.map((t) => `\`${t}\``).join(', ')})` : '')} | ${mark(importable, partial)} |`,
    );
  }
  return lines;
}

function ruleTable(rows: RuleCoverage[]): string[] {
  const lines = ['| Rule | Node type | Provided by | Note |', '|---|---|---|---|'];
  for (const r of rows) {
    const note = r.notes.join('; ');
    lines.push(`| \`${r.rule}\` | \`${r.nodeType}\` | ${r.providers.join(', ') || '**nothing**'} |${note ? ` ${note} ` : ' '}|`);
  }
  return lines;
}

/** The rule types the aws plugin does not read: issue 27 item 3's work list. */
export function pluginGaps(rows: RuleCoverage[]): Array<{ nodeType: string; rules: number }> {
  const counts = new Map<string, number>();
  for (const r of rows) if (!r.providers.includes('aws plugin')) counts.set(r.nodeType, (counts.get(r.nodeType) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([nodeType, rules]) => ({ nodeType, rules }));
}

export function coverageMarkdown(rows: RuleCoverage[] = ruleCoverage()): string {
  const gaps = pluginGaps(rows);
  const count = (p: Provider) => rows.filter((r) => r.providers.includes(p)).length;
  return [
    '# Rule coverage',
    '',
    '<!-- Generated by src/modules/discovery/rule-coverage.ts: do not edit. Regenerate with',
    '     UPDATE_COVERAGE=1 npx vitest run --project unit src/modules/discovery/rule-coverage.unit.test.ts -->',
    '',
    'Which source can put into the graph the resources each built-in rule (`content/rules/aws/*.yaml`) evaluates. A rule',
    'evaluates the nodes of one type; the nodes come from a discovery job (the `aws` plugin reading an account, the',
    '`terraform-state` plugin reading a state) or from an import of AWS Config output (`POST /imports`, format `aws-config`),',
    'which gives every AWS Config resource type. The Terraform state plugin fills the attributes its mapping knows',
    '(`src/modules/discovery/terraform-state.ts`); a rule reading a property the source did not give judges the resource',
    "as its `when_missing` says. Host rules (`content/rules/host/`) read the agents' reports, not the graph, and are not listed.",
    '',
    `${rows.length} rules on ${new Set(rows.map((r) => r.nodeType)).size} node types: the aws plugin provides ${count('aws plugin')}, Terraform state ${count('Terraform state')}, AWS Config imports ${count('AWS Config import')}; ${rows.filter((r) => r.providers.length === 0).length} have no source.`,
    '',
    '## By node type',
    '',
    ...typeTable(rows),
    '',
    '## Types the aws plugin does not read yet',
    '',
    `The plugin reads ${awsPluginConfigTypes().length} resource types (\`src/modules/discovery/aws.ts\` and its per-service files \`aws-*.ts\`), ${ownTypes()}. ${
      gaps.length ? 'Rules on these types fire on a real account only through Terraform state or an AWS Config import:' : 'Every node type a built-in rule reads is among them.'
    }`,
    '',
    ...gaps.flatMap((g, i) => [`- \`${g.nodeType}\` (${g.rules} ${g.rules === 1 ? 'rule' : 'rules'})`, ...(i === gaps.length - 1 ? [''] : [])]),
    '## By rule',
    '',
    ...ruleTable(rows),
    '',
  ].join('\n');
}
