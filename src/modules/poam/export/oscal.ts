import { createHash, randomUUID } from 'node:crypto';
import type { PoamStatus } from '../model.js';
import { detectionDate, detectorSource, riskRating, type ExportData } from './collect.js';

/**
 * An OSCAL POA&M document (OSCAL 1.0.6 JSON, the model of NIST's oscal_poam_schema), shaped the way
 * FedRAMP's OSCAL POA&M template shapes it (GSA/fedramp-automation, FedRAMP-POAM-OSCAL-Template):
 * one `poam-item` per item with the FedRAMP `POAM-ID` property; one `risk` per item carrying the
 * weakness, the impacted controls (`impacted-control-id`, OSCAL's lower-case control ids), the status,
 * the FedRAMP risk facet, the deadline (scheduled completion), the remediation plan with the
 * milestones as tasks, and the comment log as the risk log; one `observation` per item that came
 * from a finding (the detector and the asset); evidence files as back-matter resources with their
 * SHA-256. UUIDs of items, risks, observations, milestones and log entries are derived from the
 * tenant and the POA&M number (UUID v5), so two exports of the same item agree; the document's own
 * UUID is new on every export, as OSCAL asks of a new revision.
 */
export const OSCAL_VERSION = '1.0.6';
export const FEDRAMP_NS = 'https://fedramp.gov/ns/oscal';
export const CONTROLGRAPH_NS = 'urn:controlgraph:poam';

/** A fixed namespace for the UUID v5 of this service's OSCAL objects. */
const NAMESPACE = Buffer.from('6f1f4c9e0a7b4d1e9c3f2b8a5d7e6c41', 'hex');

/** RFC 4122 UUID version 5 (SHA-1, name-based) of the parts. */
export function uuidV5(...parts: string[]): string {
  const hash = createHash('sha1').update(NAMESPACE).update(parts.join('\u0000')).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** OSCAL risk-status values for the item statuses. */
export const RISK_STATUS: Record<PoamStatus, string> = {
  open: 'open',
  in_progress: 'remediating',
  verification: 'remediating',
  closed: 'closed',
};

/** StringDatatype: non-empty, no leading or trailing whitespace. */
function text(value: string | null | undefined, fallback: string): string {
  const trimmed = (value ?? '').trim();
  return trimmed || fallback;
}

/** A single line (titles): line breaks collapsed. */
function line(value: string, fallback: string): string {
  return text(value.replace(/\s+/g, ' '), fallback);
}

const at = (date: string) => `${date.slice(0, 10)}T00:00:00Z`;

/** AC-2(1) → ac-2.1; ids of other frameworks are not OSCAL 800-53 ids and are left out of impacted-control-id. */
export function oscalControlId(id: string): string | null {
  const match = /^([A-Z]{2})-(\d+)(?:\((\d+)\))?$/.exec(id);
  if (!match) return null;
  return `${match[1]!.toLowerCase()}-${match[2]}${match[3] ? `.${match[3]}` : ''}`;
}

function prop(name: string, value: string, ns = CONTROLGRAPH_NS) {
  return { name, ns, value: text(value, '-') };
}

export function oscalPoam(data: ExportData, apiBase: string) {
  const t = data.tenant.id;
  const tenantParty = uuidV5(t, 'party');
  const tool = uuidV5(t, 'component', 'controlgraph');
  const observations: unknown[] = [];
  const risks: unknown[] = [];
  const poamItems: unknown[] = [];
  const resources: unknown[] = [];

  for (const item of data.items) {
    const key = [t, item.id];
    const riskUuid = uuidV5(...key, 'risk');
    const observationUuid = item.finding ? uuidV5(...key, 'observation') : null;
    const origin = { actors: [{ type: 'party', 'actor-uuid': tenantParty }, ...(item.finding ? [{ type: 'tool', 'actor-uuid': tool }] : [])] };

    if (item.finding && observationUuid) {
      const f = item.finding;
      observations.push({
        uuid: observationUuid,
        title: line(`${f.rule_id} on ${f.resource_id}`, item.id),
        description: text(item.weakness_description, item.weakness_name),
        props: [prop('finding-id', f.id), prop('resource-type', f.resource_type)],
        methods: ['TEST'],
        types: ['finding'],
        origins: [origin],
        'relevant-evidence': [{ description: text(`${detectorSource(item)}: rule ${f.rule_id}, resource ${f.resource_id}`, 'audit') }],
        collected: new Date(f.first_seen).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      });
    }

    const controls = item.control_ids.map(oscalControlId).filter((c): c is string => c !== null);
    const milestones = item.milestones.map((m, i) => ({
      uuid: uuidV5(...key, 'milestone', String(i)),
      type: 'milestone',
      title: line(`Milestone ${i + 1}`, 'Milestone'),
      description: text(m.description, `Milestone ${i + 1}`),
      props: [prop('done', m.done ? 'true' : 'false')],
      timing: { 'on-date': { date: at(m.date) } },
    }));
    const remediation = {
      uuid: uuidV5(...key, 'remediation'),
      lifecycle: 'planned',
      title: 'Remediation plan',
      description: text(item.finding?.remediation, `Remediate ${item.weakness_name} by ${item.scheduled_completion}.`),
      ...(milestones.length ? { tasks: milestones } : {}),
    };
    const entries = item.comments.map((c, i) => ({
      uuid: uuidV5(...key, 'log', String(i)),
      title: line(c.status_to ? `Status ${c.status_from ?? 'new'} → ${c.status_to}` : 'Comment', 'Comment'),
      description: text(`${c.author}: ${c.text}`, c.author),
      start: c.at.replace(/\.\d{3}Z$/, 'Z'),
      ...(c.status_to ? { 'status-change': RISK_STATUS[c.status_to] } : {}),
    }));
    const props = [
      ...controls.map((c) => prop('impacted-control-id', c, FEDRAMP_NS)),
      ...item.control_ids.filter((c) => oscalControlId(c) === null).map((c) => prop('control-id', c)),
      prop('poam-status', item.status),
      prop('severity', item.severity),
      prop('point-of-contact', item.point_of_contact),
      prop('vendor-dependency', item.vendor_dependency ? 'yes' : 'no'),
      ...(item.overdue ? [prop('overdue', 'true')] : []),
    ];
    risks.push({
      uuid: riskUuid,
      title: line(item.weakness_name, item.id),
      description: text(item.weakness_description, item.weakness_name),
      statement: text(item.deviation_request ? `Deviation requested: ${item.deviation_request}` : item.weakness_description, item.weakness_name),
      props,
      status: item.deviation_request && item.status !== 'closed' ? 'deviation-requested' : RISK_STATUS[item.status],
      characterizations: [{ origin, facets: [{ name: 'risk', system: FEDRAMP_NS, value: riskRating(item.severity).toLowerCase(), props: [{ name: 'state', value: 'initial' }] }] }],
      deadline: at(item.scheduled_completion),
      remediations: [remediation],
      ...(entries.length ? { 'risk-log': { entries } } : {}),
      ...(observationUuid ? { 'related-observations': [{ 'observation-uuid': observationUuid }] } : {}),
    });
    for (const e of item.evidence) {
      resources.push({
        uuid: uuidV5(t, 'evidence', e.id),
        title: line(e.filename, 'evidence'),
        description: text(`Evidence of ${item.id}`, item.id),
        props: [prop('poam-id', item.id), prop('evidence-id', e.id)],
        rlinks: [{ href: `${apiBase}/poam/${item.id}/evidence/${e.id}/download`, hashes: [{ algorithm: 'SHA-256', value: e.sha256 }] }],
      });
    }
    poamItems.push({
      uuid: uuidV5(...key, 'item'),
      title: line(item.weakness_name, item.id),
      description: text(item.weakness_description, item.weakness_name),
      props: [{ name: 'POAM-ID', ns: FEDRAMP_NS, value: item.id }, prop('detection-date', detectionDate(item)), ...(item.finding_id ? [prop('finding-id', item.finding_id)] : [])],
      ...(observationUuid ? { 'related-observations': [{ 'observation-uuid': observationUuid }] } : {}),
      'related-risks': [{ 'risk-uuid': riskUuid }],
      ...(item.evidence.length ? { links: item.evidence.map((e) => ({ href: `#${uuidV5(t, 'evidence', e.id)}`, rel: 'evidence', text: line(e.filename, 'evidence') })) } : {}),
    });
  }

  const generated = data.generatedAt.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    'plan-of-action-and-milestones': {
      uuid: randomUUID(),
      metadata: {
        title: line(`${data.workspace.name} Plan of Action and Milestones (POA&M)`, 'Plan of Action and Milestones (POA&M)'),
        published: generated,
        'last-modified': generated,
        version: generated,
        'oscal-version': OSCAL_VERSION,
        roles: [{ id: 'prepared-for', title: 'Prepared For' }],
        parties: [{ uuid: tenantParty, type: 'organization', name: text(data.tenant.name, data.tenant.id) }],
        'responsible-parties': [{ 'role-id': 'prepared-for', 'party-uuids': [tenantParty] }],
      },
      'system-id': { 'identifier-type': 'http://ietf.org/rfc/rfc4122', id: data.workspace.id },
      'local-definitions': {
        components: [
          {
            uuid: tool,
            type: 'software',
            title: 'ControlGraph',
            description: 'Compliance audits of the infrastructure graph: the detector of findings linked to POA&M items.',
            status: { state: 'operational' },
          },
        ],
      },
      ...(observations.length ? { observations } : {}),
      ...(risks.length ? { risks } : {}),
      // poam-items is required; an empty POA&M still lists none.
      'poam-items': poamItems,
      ...(resources.length ? { 'back-matter': { resources } } : {}),
    },
  };
}
