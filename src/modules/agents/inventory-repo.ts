import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import { inWorkspace, workspaceIs, type Scope } from '../../platform/db/scope.js';
import { canonical } from '../compliance/index.js';
import type { FileState } from './drift.js';
import { matchKey, NO_MATCH, type HostPackage, type MatchResult } from './packages.js';
import type { StoredAdvisory } from './tables.js';
import './tables.js';

/**
 * The inventories of a host in the agent tables: packages (one row each, written as a diff so an
 * unchanged inventory costs one read), the other collections (one JSON array each, rewritten when
 * their digest changes) and the file-integrity baseline.
 */

export interface StoredPackage {
  manager: string;
  name: string;
  arch: string;
  version: string;
  source_name: string | null;
  source_version: string | null;
  installed_at: Date | null;
  purl: string;
  reported_cves: string[];
  matched_cves: string[];
  advisories: StoredAdvisory[];
}

export const storedKey = (p: Pick<StoredPackage, 'manager' | 'name' | 'arch' | 'version'>) => `${p.manager}\u0000${p.name}\u0000${p.arch}\u0000${p.version}`;

export async function readPackages(db: Kysely<Database>, scope: Scope, nodeId: string): Promise<StoredPackage[]> {
  return db
    .selectFrom('agent_host_packages')
    .select(['manager', 'name', 'arch', 'version', 'source_name', 'source_version', 'installed_at', 'purl', 'reported_cves', 'matched_cves', 'advisories'])
    .where(inWorkspace(scope))
    .where('node_id', '=', nodeId)
    .execute() as Promise<StoredPackage[]>;
}

/** Stored match results by match key, valid while the vulnerability store is in the same state. */
export function matchCache(stored: readonly StoredPackage[], ecosystemOf: (manager: string) => string | null): Map<string, MatchResult> {
  const cache = new Map<string, MatchResult>();
  for (const p of stored) {
    const ecosystem = ecosystemOf(p.manager);
    if (!ecosystem) continue;
    cache.set(matchKey({ ecosystem, name: p.name, version: p.version, source_name: p.source_name, source_version: p.source_version }), {
      matched_cves: p.matched_cves,
      advisories: p.advisories,
    });
  }
  return cache;
}

export interface PackageWithMatch extends HostPackage {
  match: MatchResult;
}

export interface PackageDiff {
  upserts: PackageWithMatch[];
  deletes: StoredPackage[];
  added: number;
  updated: number;
}

function same(stored: StoredPackage, p: PackageWithMatch): boolean {
  return (
    stored.source_name === p.source_name &&
    stored.source_version === p.source_version &&
    (stored.installed_at ? new Date(stored.installed_at).toISOString() : null) === p.installed_at &&
    stored.purl === p.purl &&
    canonical(stored.reported_cves) === canonical(p.reported_cves) &&
    canonical(stored.matched_cves) === canonical(p.match.matched_cves) &&
    canonical(stored.advisories) === canonical(p.match.advisories)
  );
}

export function diffPackages(stored: readonly StoredPackage[], current: readonly PackageWithMatch[]): PackageDiff {
  const byKey = new Map(stored.map((p) => [storedKey(p), p]));
  const upserts: PackageWithMatch[] = [];
  let added = 0;
  let updated = 0;
  for (const p of current) {
    const before = byKey.get(p.key);
    byKey.delete(p.key);
    if (!before) {
      added++;
      upserts.push(p);
    } else if (!same(before, p)) {
      updated++;
      upserts.push(p);
    }
  }
  return { upserts, deletes: [...byKey.values()], added, updated };
}

const CHUNK = 500;

export async function writePackages(trx: Kysely<Database>, scope: Scope, nodeId: string, diff: PackageDiff): Promise<void> {
  for (let i = 0; i < diff.upserts.length; i += CHUNK) {
    await trx
      .insertInto('agent_host_packages')
      .values(
        diff.upserts.slice(i, i + CHUNK).map((p) => ({
          tenant_id: scope.tenantId,
          workspace_id: scope.workspaceId,
          node_id: nodeId,
          manager: p.manager,
          name: p.name,
          arch: p.arch,
          version: p.version,
          source_name: p.source_name,
          source_version: p.source_version,
          installed_at: p.installed_at,
          purl: p.purl,
          reported_cves: p.reported_cves,
          matched_cves: p.match.matched_cves,
          advisories: json(p.match.advisories),
        })),
      )
      .onConflict((oc) =>
        oc.columns(['workspace_id', 'node_id', 'manager', 'name', 'arch', 'version']).doUpdateSet((eb) => ({
          source_name: eb.ref('excluded.source_name'),
          source_version: eb.ref('excluded.source_version'),
          installed_at: eb.ref('excluded.installed_at'),
          purl: eb.ref('excluded.purl'),
          reported_cves: eb.ref('excluded.reported_cves'),
          matched_cves: eb.ref('excluded.matched_cves'),
          advisories: eb.ref('excluded.advisories'),
        })),
      )
      .execute();
  }
  for (let i = 0; i < diff.deletes.length; i += CHUNK) {
    const chunk = diff.deletes.slice(i, i + CHUNK);
    await sql`
      DELETE FROM agent_host_packages p
      USING unnest(${chunk.map((d) => d.manager)}::text[], ${chunk.map((d) => d.name)}::text[], ${chunk.map((d) => d.arch)}::text[], ${chunk.map((d) => d.version)}::text[])
        AS d(manager, name, arch, version)
      WHERE ${workspaceIs(scope, 'p')} AND p.node_id = ${nodeId}
        AND p.manager = d.manager AND p.name = d.name AND p.arch = d.arch AND p.version = d.version`.execute(trx);
  }
}

export function withMatches(packages: readonly HostPackage[], lookup: (p: HostPackage) => MatchResult | undefined): PackageWithMatch[] {
  return packages.map((p) => ({ ...p, match: p.ecosystem ? (lookup(p) ?? NO_MATCH) : NO_MATCH }));
}

export function digestOf(items: unknown): string {
  return createHash('sha256').update(canonical(items)).digest('hex');
}

/** Replaces each given collection whose content changed; returns the names written. */
export async function writeCollections(trx: Kysely<Database>, scope: Scope, nodeId: string, now: Date, collections: Array<{ name: string; items: unknown[] }>): Promise<string[]> {
  if (collections.length === 0) return [];
  const stored = await trx.selectFrom('agent_host_collections').select(['collection', 'digest']).where(inWorkspace(scope)).where('node_id', '=', nodeId).execute();
  const digests = new Map(stored.map((r) => [r.collection, r.digest]));
  const written: string[] = [];
  for (const { name, items } of collections) {
    const digest = digestOf(items);
    if (digests.get(name) === digest) continue;
    written.push(name);
    await trx
      .insertInto('agent_host_collections')
      .values({
        tenant_id: scope.tenantId,
        workspace_id: scope.workspaceId,
        node_id: nodeId,
        collection: name,
        items: json(items),
        item_count: items.length,
        digest,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.columns(['workspace_id', 'node_id', 'collection']).doUpdateSet((eb) => ({
          items: eb.ref('excluded.items'),
          item_count: eb.ref('excluded.item_count'),
          digest: eb.ref('excluded.digest'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }
  return written;
}

export async function readFiles(trx: Kysely<Database>, scope: Scope, nodeId: string): Promise<Map<string, FileState>> {
  const rows = await trx
    .selectFrom('agent_host_files')
    .select(['path', 'sha256', 'size_bytes', 'modified_at', 'permissions', 'owner', 'group'])
    .where(inWorkspace(scope))
    .where('node_id', '=', nodeId)
    .execute();
  return new Map(
    rows.map((r) => [
      r.path,
      {
        sha256: r.sha256,
        size_bytes: r.size_bytes === null ? null : Number(r.size_bytes),
        modified_at: r.modified_at ? new Date(r.modified_at).toISOString() : null,
        permissions: r.permissions,
        owner: r.owner,
        group: r.group,
      },
    ]),
  );
}

/** The baseline becomes the report's files (paths the report lacks keep their last state). */
export async function writeFiles(trx: Kysely<Database>, scope: Scope, nodeId: string, now: Date, files: Array<{ path: string; state: FileState }>): Promise<void> {
  for (let i = 0; i < files.length; i += CHUNK) {
    await trx
      .insertInto('agent_host_files')
      .values(
        files.slice(i, i + CHUNK).map(({ path, state }) => ({
          tenant_id: scope.tenantId,
          workspace_id: scope.workspaceId,
          node_id: nodeId,
          path,
          sha256: state.sha256,
          size_bytes: state.size_bytes,
          modified_at: state.modified_at,
          permissions: state.permissions,
          owner: state.owner,
          group: state.group,
          first_seen_at: now,
          updated_at: now,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['workspace_id', 'node_id', 'path']).doUpdateSet((eb) => ({
          sha256: eb.ref('excluded.sha256'),
          size_bytes: eb.ref('excluded.size_bytes'),
          modified_at: eb.ref('excluded.modified_at'),
          permissions: eb.ref('excluded.permissions'),
          owner: eb.ref('excluded.owner'),
          group: eb.ref('excluded.group'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }
}
