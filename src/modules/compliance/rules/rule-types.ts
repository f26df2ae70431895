/**
 * The shape of a compliance rule once loaded. Built-in rules come from `content/rules/**.yaml`
 * (see content/rules/README.md); custom rules created through the API share every field except
 * `builtin`, `source`, `reads` and `prowler_checks`, which only the shipped content carries.
 */

import type { WhenMissing } from './when-missing.js';

export const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] as const;
export type Severity = (typeof SEVERITIES)[number];

/**
 * The registry of scored frameworks: each has its catalog in content/frameworks/<id>.json (loaded by
 * frameworks.ts, which says from the catalog whether a tenant has it on by default). The first four
 * are the frameworks built-in rules name in their content; the others are carried as Prowler ships
 * them, and rules count toward them through the Prowler checks they reproduce (prowler-mappings.ts).
 */
export const CORE_FRAMEWORKS = ['nist-800-53', 'cis-aws', 'pci-dss', 'soc2'] as const;
export const PROWLER_FRAMEWORKS = ['hipaa', 'iso-27001', 'nist-csf', 'nist-800-171', 'fedramp-low', 'fedramp-moderate', 'fedramp-20x-ksi-low', 'gdpr', 'aws-fsbp', 'cisa'] as const;
export const FRAMEWORKS = [...CORE_FRAMEWORKS, ...PROWLER_FRAMEWORKS] as const;
export type FrameworkId = (typeof FRAMEWORKS)[number];

export interface FrameworkMapping {
  framework: FrameworkId;
  control_id: string;
}

/**
 * The public mappings a primary NIST SP 800-53 control may be taken from (content/rules/README.md,
 * "Primary NIST controls"); the content tests check each citation against the mapping's data:
 * - `prowler`: Prowler's nist_800_53_revision_5_aws.json lists one of the rule's `prowler_checks`
 *   under the control (content/frameworks/crosswalk.json);
 * - `aws-security-hub`: AWS's NIST SP 800-53 rev5 mapping of the AWS Config rule named in the rule's
 *   `aws_config_rules` (content/frameworks/nist-800-53-primary-sources.json);
 * - `compliance-as-code`: the NIST references of the ComplianceAsCode rule named in a host rule's
 *   `cac_rules` (same file).
 */
/** Finding titles are one line: they are e-mail subjects, chat headers and POA&M weakness names. */
export const FINDING_TITLE_MAX = 200;

export const NIST_SOURCES = ['prowler', 'aws-security-hub', 'compliance-as-code'] as const;
export type NistSource = (typeof NIST_SOURCES)[number];

/** A primary NIST SP 800-53 rev5 control of a rule and the public mapping it is taken from. */
export interface NistControl {
  control_id: string;
  source: NistSource;
}

export interface RemediationStep {
  /** 1..n, from the step's position in the file. */
  order: number;
  action: string;
  command: string;
}

export interface Remediation {
  summary: string;
  steps: RemediationStep[];
}

/**
 * How to fix the finding in Terraform, for the node's own resource block. Exactly one of `add_block`
 * (a block appended after the resource; `${name}` is the resource's Terraform name and `${ref}` its
 * address) or `set` (top-level attributes added or replaced inside the resource's block).
 */
export interface TerraformFix {
  resource: string;
  add_block?: string;
  set?: Record<string, TerraformValue>;
}

export type TerraformScalar = string | number | boolean;
export type TerraformValue = TerraformScalar | TerraformScalar[];

/**
 * What a finding's root cause is, for root-cause groups (`GET /findings/grouped`): findings of one
 * rule with the same cause form one group. `cause` names the kind of cause in group labels
 * ("security group"); exactly one of the other fields says where its identity comes from:
 * - `self`: the resource is its own cause (rules on a resource others attach to, such as a security
 *   group: two open groups are two causes, never merged);
 * - `path`: the value(s) of a property path of the resource (schema form, lists unmarked, e.g.
 *   `configuration.dBClusterIdentifier`); several values (a list) are one cause, the set of them;
 * - `edge`: the node(s) at the other end of the resource's edges of that type (either direction),
 *   optionally only of `node_type`.
 * A resource for which `path` or `edge` yields nothing has no known cause, and a rule without
 * `group_by` has none at all: those findings group by rule, account and region.
 */
export type GroupBy = { cause: string; self: true } | { cause: string; path: string } | { cause: string; edge: string; node_type?: string };

export interface RuleSource {
  /** Path relative to the project root when the file is inside it, absolute otherwise. */
  file: string;
  /** 1-based line of the rule's first key. */
  line: number;
}

export interface RuleDefinition {
  id: string;
  /** The check's own title, worded as the desired state ("RDS DB instance storage is encrypted"); rule listings show it. */
  title: string;
  description: string;
  /**
   * The finding's title, worded as the failure ("RDS DB instance storage is not encrypted"): what every
   * finding, POA&M item, report, webhook, stream event and e-mail shows. Never equal to `title`.
   */
  finding_title: string;
  /** The finding's description: what is wrong with the resource and why it matters. */
  finding_description: string;
  /**
   * The rule's primary NIST SP 800-53 rev5 controls (one or two), each from a cited public mapping. Only
   * these count as failing in NIST SP 800-53; the rule's other NIST mappings are related (shown, not
   * counted). See primary-controls.ts.
   */
  nist_controls: NistControl[];
  /** The AWS Config managed rules (lower-case identifiers) the rule corresponds to: the `aws-security-hub` citation. */
  aws_config_rules?: string[];
  severity: Severity;
  /** Node type, `<provider>.<service>.<type>`, e.g. `aws.s3.bucket`. */
  resource_type: string;
  /** The AWS Config type the node type derives from, e.g. `AWS::S3::Bucket` (AWS rules only). */
  config_resource_type?: string;
  framework: FrameworkId;
  control_id: string;
  framework_mappings: FrameworkMapping[];
  /** CEL over `resource`; true when the resource VIOLATES the rule. */
  condition: string;
  remediation: Remediation;
  terraform?: TerraformFix;
  /** A violation makes the resource reachable from the Internet (used by the risk score). */
  exposure?: 'internet';
  /** The root cause of a violation, for finding groups; absent: group by account and region. */
  group_by?: GroupBy;
  /** Every property path the condition reads, schema form (no `properties.` prefix). */
  reads: string[];
  /** What a resource lacking a path of `reads` (not in `optional_reads`) is judged (when-missing.ts). */
  when_missing?: WhenMissing;
  /** The AWS documentation `when_missing` rests on (an https URL and a note), or why it is unknown. */
  when_missing_source?: string;
  /** Paths of `reads` whose absence the condition judges itself (has()): never "missing". */
  optional_reads?: string[];
  /** The Prowler checks the rule reproduces, which ground its framework mappings. */
  prowler_checks?: string[];
  builtin: true;
  source: RuleSource;
}
