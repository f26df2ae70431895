import { sql } from 'kysely';
import type { AppDeps } from '../../deps.js';
import { inWorkspace, inTenant, type Scope } from '../../platform/db/scope.js';
import { attributeSql, storedFilter } from './filter/sql.js';
import { MAPPED_ATTRIBUTES } from './filter/attributes.js';
import { syncDerivedApplications } from './derived.js';
import { CRITICALITIES, type Criticality } from './tables.js';
import './tables.js';
import { edgesFrom, nodeNameByNativeId, nodesInScope } from '../graph/index.js';

/** Tag keys that name something above an application, most specific first (compared case-insensitively). */
export const GROUPING_TAG_KEYS = ['business-service', 'business_service', 'businessservice', 'service', 'system', 'product', 'project', 'workload'] as const;
const OWNER_KEYS = ['owner', 'team'];
const CRITICALITY_KEYS = ['criticality', 'business-criticality', 'business_criticality'];
/** A value groups an application when at least this share of its resources carries it. */
const MAJORITY = 0.5;
const MAX_APPLICATIONS = 1000;
const CHUNK = 100;
const ID_CHUNK = 5000;

interface App {
  id: string;
  name: string;
  derived: boolean;
  derived_value: string | null;
  filter: string;
  members: string[];
}

interface NodeFacts {
  tags: Map<string, string>;
  vpc: string | null;
}

type Reason = 'shared_tag' | 'shared_vpc' | 'connected';

interface Proposal {
  name: string;
  reason: Reason;
  explanation: string;
  evidence: { tag_key?: string; tag_value?: string; vpc_id?: string; edges?: number };
  apps: App[];
}

function majority(values: Array<string | null | undefined>, total: number): string | null {
  const counts = new Map<string, number>();
  for (const v of values) if (v) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: string | null = null;
  let bestCount = 0;
  for (const [value, count] of [...counts].sort((a, b) => a[0].localeCompare(b[0]))) {
    if (count > bestCount) {
      best = value;
      bestCount = count;
    }
  }
  return best !== null && total > 0 && bestCount / total >= MAJORITY ? best : null;
}

/** Most frequent value (any share), or null. */
function mostCommon(values: Array<string | null | undefined>): string | null {
  const counts = new Map<string, number>();
  for (const v of values) if (v) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? null;
}

function list(names: string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/**
 * Proposes business services from the applications (derived ones included), in three passes; an
 * application joins at most one proposal, the first that fits:
 *   1. shared tag: most of the application's resources carry the same value of a grouping tag key
 *      (business-service, service, system, product, project, workload; a derived application is
 *      not grouped by its own value);
 *   2. shared VPC: most of its resources are in the same VPC (vpc_id of the filter language);
 *   3. connectivity: edges of the graph join resources of the applications (connected components).
 * Only groups of at least `min_applications` become proposals. Criticality and owner are proposed
 * from the resources' criticality and owner/team tags when present (criticality defaults to medium).
 */
// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createSuggestions(deps: Pick<AppDeps, 'database' | 'clock'>) {
  const db = deps.database.db;

  async function loadApps(scope: Scope, includeAssigned: boolean): Promise<App[]> {
    let q = db
      .selectFrom('applications as a')
      .select(['a.id', 'a.name', 'a.derived', 'a.derived_value', 'a.filter'])
      .where(inWorkspace(scope, 'a'))
      .where(inTenant(scope.tenantId, 'a'));
    if (!includeAssigned) {
      q = q.where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('business_service_applications as bsa').select('bsa.service_id').whereRef('bsa.application_id', '=', 'a.id'))),
      );
    }
    const rows = await q
      .orderBy(sql`lower(a.name)`)
      .orderBy('a.id')
      .limit(MAX_APPLICATIONS)
      .execute();
    return rows.map((r) => ({ ...r, members: [] }));
  }

  async function loadMembers(scope: Scope, apps: App[]) {
    for (let start = 0; start < apps.length; start += CHUNK) {
      const chunk = apps.slice(start, start + CHUNK);
      const values = chunk.map((a, i) => sql`(${i}::int, ${storedFilter(a.filter).predicate('n')})`);
      const rows = await sql<{ g: number; id: string }>`
        SELECT k.g, n.id FROM ${nodesInScope(scope)} n CROSS JOIN LATERAL (VALUES ${sql.join(values)}) AS k(g, hit)
        WHERE k.hit`.execute(db);
      for (const row of rows.rows) chunk[row.g]!.members.push(row.id);
    }
  }

  async function loadFacts(scope: Scope, ids: string[]): Promise<Map<string, NodeFacts>> {
    const facts = new Map<string, NodeFacts>();
    const keys = [...GROUPING_TAG_KEYS, ...OWNER_KEYS, ...CRITICALITY_KEYS];
    const vpc = attributeSql({ kind: 'mapped', name: 'vpc_id', mapping: MAPPED_ATTRIBUTES.vpc_id! }, 'n');
    for (let i = 0; i < ids.length; i += ID_CHUNK) {
      const rows = await sql<{ id: string; tags: Array<{ key: string; value: string }> | null; vpc: string | null }>`
        SELECT n.id, ${vpc} AS vpc,
          (SELECT json_agg(json_build_object('key', lower(t.key), 'value', t.value))
             FROM jsonb_each_text(CASE WHEN jsonb_typeof(n.tags) = 'object' THEN n.tags ELSE '{}'::jsonb END) AS t(key, value)
             WHERE lower(t.key) = ANY(${keys}::text[]) AND btrim(t.value) <> '') AS tags
        FROM ${nodesInScope(scope)} n
        WHERE n.id = ANY(${ids.slice(i, i + ID_CHUNK)}::text[])`.execute(db);
      for (const row of rows.rows) facts.set(row.id, { vpc: row.vpc, tags: new Map((row.tags ?? []).map((t) => [t.key, t.value])) });
    }
    return facts;
  }

  /** Edge counts between the member resources of different applications, keyed "i:j" (i < j). */
  async function loadLinks(scope: Scope, apps: App[]): Promise<Map<string, number>> {
    const owners = new Map<string, number[]>();
    apps.forEach((a, i) => {
      for (const id of a.members) {
        const list = owners.get(id);
        if (list) list.push(i);
        else owners.set(id, [i]);
      }
    });
    const ids = [...owners.keys()];
    const links = new Map<string, number>();
    for (let i = 0; i < ids.length; i += ID_CHUNK) {
      for (const edge of await edgesFrom(db, scope, ids.slice(i, i + ID_CHUNK))) {
        const to = owners.get(edge.target);
        if (!to) continue;
        for (const a of owners.get(edge.source)!) {
          for (const b of to) {
            if (a === b) continue;
            const key = a < b ? `${a}:${b}` : `${b}:${a}`;
            links.set(key, (links.get(key) ?? 0) + 1);
          }
        }
      }
    }
    return links;
  }

  async function vpcName(scope: Scope, vpcId: string): Promise<string> {
    const name = await nodeNameByNativeId(db, scope, vpcId, '%.vpc');
    return name && name !== vpcId ? `${name} (${vpcId})` : vpcId;
  }

  return async function suggest(scope: Scope, options: { include_assigned?: boolean; min_applications?: number }) {
    const minApps = options.min_applications ?? 2;
    await syncDerivedApplications(db, scope, deps.clock.now());
    const apps = await loadApps(scope, options.include_assigned ?? false);
    await loadMembers(scope, apps);
    const withMembers = apps.filter((a) => a.members.length > 0);
    const facts = await loadFacts(scope, [...new Set(withMembers.flatMap((a) => a.members))]);
    const proposals: Proposal[] = [];
    let pool = withMembers;

    // 1. A shared grouping tag value.
    const byTag = new Map<string, { key: string; value: string; apps: App[] }>();
    for (const app of pool) {
      for (const key of GROUPING_TAG_KEYS) {
        const value = majority(
          app.members.map((id) => facts.get(id)?.tags.get(key)),
          app.members.length,
        );
        if (value === null || (app.derived && app.derived_value === value)) continue;
        const group = byTag.get(`${key}\u0000${value}`) ?? { key, value, apps: [] };
        group.apps.push(app);
        byTag.set(`${key}\u0000${value}`, group);
        break;
      }
    }
    for (const group of byTag.values()) {
      if (group.apps.length < minApps) continue;
      proposals.push({
        name: group.value,
        reason: 'shared_tag',
        explanation: `${group.apps.length} applications whose resources mostly carry the tag ${group.key} = "${group.value}": ${list(group.apps.map((a) => a.name))}`,
        evidence: { tag_key: group.key, tag_value: group.value },
        apps: group.apps,
      });
    }
    const placed = () => new Set(proposals.flatMap((p) => p.apps.map((a) => a.id)));
    pool = pool.filter((a) => !placed().has(a.id));

    // 2. A shared VPC.
    const byVpc = new Map<string, App[]>();
    for (const app of pool) {
      const vpc = majority(
        app.members.map((id) => facts.get(id)?.vpc),
        app.members.length,
      );
      if (vpc) byVpc.set(vpc, [...(byVpc.get(vpc) ?? []), app]);
    }
    for (const [vpc, group] of byVpc) {
      if (group.length < minApps) continue;
      const name = await vpcName(scope, vpc);
      proposals.push({
        name,
        reason: 'shared_vpc',
        explanation: `${group.length} applications whose resources are mostly in the VPC ${vpc}: ${list(group.map((a) => a.name))}`,
        evidence: { vpc_id: vpc },
        apps: group,
      });
    }
    const taken = placed();
    pool = pool.filter((a) => !taken.has(a.id));

    // 3. Graph connectivity: connected components of "an edge joins their resources".
    const links = await loadLinks(scope, pool);
    const parent = pool.map((_, i) => i);
    const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
    for (const key of links.keys()) {
      const [a, b] = key.split(':').map(Number) as [number, number];
      parent[find(a)] = find(b);
    }
    const components = new Map<number, number[]>();
    pool.forEach((_, i) => components.set(find(i), [...(components.get(find(i)) ?? []), i]));
    for (const members of components.values()) {
      if (members.length < minApps) continue;
      const inside = new Set(members);
      let edges = 0;
      for (const [key, n] of links) {
        const [a, b] = key.split(':').map(Number) as [number, number];
        if (inside.has(a) && inside.has(b)) edges += n;
      }
      const group = members.map((i) => pool[i]!);
      proposals.push({
        name: group.map((a) => a.name).join(' + '),
        reason: 'connected',
        explanation: `${group.length} applications whose resources are joined by ${edges} edge${edges === 1 ? '' : 's'} of the graph: ${list(group.map((a) => a.name))}`,
        evidence: { edges },
        apps: group,
      });
    }

    const grouped = placed();
    const items = proposals.map((p) => {
      const memberIds = [...new Set(p.apps.flatMap((a) => a.members))];
      const tagValues = (keys: string[]) => memberIds.map((id) => keys.map((k) => facts.get(id)?.tags.get(k)).find(Boolean));
      const criticalityTag = mostCommon(
        tagValues(CRITICALITY_KEYS)
          .map((v) => v?.toLowerCase())
          .filter((v) => (CRITICALITIES as readonly string[]).includes(v ?? '')),
      );
      return {
        name: p.name,
        reason: p.reason,
        explanation: p.explanation,
        evidence: p.evidence,
        applications: p.apps.map((a) => ({ id: a.id, name: a.name, derived: a.derived, resource_count: a.members.length })),
        service: {
          name: p.name,
          description: p.explanation,
          criticality: (criticalityTag ?? 'medium') as Criticality,
          sla_tier: null,
          owner: mostCommon(tagValues(OWNER_KEYS)),
          application_ids: p.apps.map((a) => a.id),
        },
      };
    });
    return {
      items,
      total: items.length,
      applications_considered: apps.length,
      unassigned_applications: apps.filter((a) => !grouped.has(a.id)).map((a) => ({ id: a.id, name: a.name })),
    };
  };
}
