import type { Paths } from './client';

/** A framework id as the service's API names it (its FRAMEWORKS, src/modules/compliance/rules/rule-types.ts). */
export type FrameworkId = Paths['/api/v1/tenants/{tenantID}/rules/{ruleID}']['get']['responses'][200]['content']['application/json']['framework'];

/**
 * Every framework the service knows, in the order the console lists them (the four core ones first).
 * One list for every picker and filter: `satisfies` makes an id the API drops fail the type check.
 */
export const FRAMEWORK_IDS = [
  'nist-800-53',
  'cis-aws',
  'pci-dss',
  'soc2',
  'hipaa',
  'iso-27001',
  'nist-csf',
  'nist-800-171',
  'fedramp-low',
  'fedramp-moderate',
  'fedramp-20x-ksi-low',
  'gdpr',
  'aws-fsbp',
  'cisa',
] as const satisfies readonly FrameworkId[];
