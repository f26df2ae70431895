import { lookupTable } from '../lookup-table.js';

/**
 * The description of every tag the routes use, listed at the top of the OpenAPI document (the
 * document defines each tag an operation names; readers and generated clients group by them). A
 * route with a tag missing here still gets the tag defined, without a description, and the lint test
 * (test/platform/openapi-lint.test.ts) then fails on `tag-description`: add the tag here.
 */
export const TAG_DESCRIPTIONS = lookupTable<string>({
  agents: 'Host agents: registration, package and configuration reports, and the SBOM of a host.',
  alerts: 'Alert rules: chosen events delivered to a channel (each rule is an integration).',
  applications: 'Applications: resources grouped by a filter over the graph or derived from resource tags.',
  assessments: 'Assessments: assigned questionnaires, answered, submitted and reviewed.',
  'asset groups': 'Asset groups: named sets of resources defined by a filter.',
  'attestation-evidence': 'Evidence files uploaded for file questions of assessments.',
  audit: 'The tenant audit log of security-relevant changes.',
  auth: 'Log in and refresh: access tokens for users.',
  'api-keys': 'API keys for automation, with permissions, tenants and allowed addresses.',
  'business services': 'Business services: applications grouped by the business function they serve, with roll-ups and SBOM.',
  compliance: 'Compliance settings: the frameworks a tenant enables.',
  controls: 'Control status and gaps per framework.',
  exports: 'Topology exports: architecture diagrams and draw.io files, in the background or at once.',
  findings: 'Audits and their findings: listing, grouping, scoring, remediation and resolution.',
  graph: 'The infrastructure graph: nodes (resources) and edges (relationships).',
  imports: "Scanner imports: other tools' outputs (Prowler JSON-OCSF, …) uploaded and applied as findings and nodes.",
  integrations: 'Integrations (webhooks and other channels) and their deliveries.',
  jobs: 'Discovery: jobs that read Terraform state or cloud accounts into the graph, and the cloud connections they use.',
  'path tracing': 'Path tracing: paths between resources, and the blast radius of one.',
  poam: 'Plans of action and milestones: items, milestones, evidence and exports.',
  questionnaires: 'Questionnaires: templates, versions, questions, assignment and answers.',
  reports: 'Compliance reports (PDF, JSON, CSV) generated in the background.',
  respondent: "Outside respondents: one assessment answered through a link's token (Authorization: Bearer cgr_…), without an account.",
  risk: 'Risk acceptances of findings and finding groups, with expiry.',
  rules: 'Built-in and custom compliance rules (CEL conditions with control mappings).',
  schedules: 'Schedules: discovery jobs and audits run on a cron expression or an interval, with their run history.',
  sso: 'Single sign-on: OIDC and SAML connections, logins and service-provider metadata.',
  system: 'Health, metrics, status and version of the service.',
  tenants: 'Tenants: create, read, update and delete.',
  users: 'Users, memberships, roles and invitations.',
  'vulnerability intelligence': 'The vulnerability database: CVEs, KEV, EPSS, OSV and NVD data, imports and syncs.',
  workspaces: 'Workspaces: the data partitions of a tenant.',
});
