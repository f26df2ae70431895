import { sql, type Selectable } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { likePattern } from '../../platform/db/postgres.js';
import type { AppDeps } from '../../deps.js';
import { badRequest, notFound } from '../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import type { ImportStatus, StoredRange, VulnSource } from './tables.js';
import './tables.js';
import { cvss3BaseScore, cvssSeverity } from './cvss.js';
import { CVE_ID } from './import/records.js';
import { SOURCES } from './import/detect.js';
import { displayLocation, parseSourceSpecs, SYNC_SCHEDULE } from './sync-job.js';
import { NO_PACKAGE_ADVISORIES } from './matching/coverage.js';
import { outboundPolicyOf } from '../../platform/outbound/index.js';
import { lookupTable } from '../../platform/lookup-table.js';

/**
 * Reads of the vulnerability store for the API: the combined CVE record, the exploitation check, the
 * KEV list and the store's statistics.
 *
 * The check threshold: a CVE is flagged when it is in the CISA KEV catalog (exploited in the wild), or
 * when its EPSS score, the FIRST model's probability of exploitation activity in the next 30 days, is
 * at or above 0.1 (10 %). 0.1 is where FIRST's own guidance places the efficient trade-off between
 * coverage and effort for a remediation programme; a caller may pass another threshold.
 */
export const EPSS_THRESHOLD = 0.1;

type Deps = Pick<AppDeps, 'database' | 'clock' | 'config'>;

/** The combined row of getCve: live rows as JSON (dates as strings), children as arrays. */
interface CveRow {
  nvd: {
    description: string | null;
    cvss_v3_score: number | null;
    cvss_v3_severity: string | null;
    cvss_v3_vector: string | null;
    cvss_v4_score: number | null;
    cvss_v4_severity: string | null;
    published: string | null;
    last_modified: string | null;
    vuln_status: string | null;
    cwes: string[];
    reference_urls: string[];
  } | null;
  kev: {
    vendor_project: string;
    product: string;
    vulnerability_name: string;
    date_added: string;
    due_date: string | null;
    short_description: string;
    required_action: string;
    known_ransomware_campaign_use: string;
    notes: string;
    cwes: string[];
  } | null;
  epss: { epss: number; percentile: number } | null;
  epss_model: string | null;
  epss_date: Date | null;
  advisories: Array<{
    id: string;
    summary: string | null;
    details: string | null;
    aliases: string[];
    modified: string | null;
    published: string | null;
    severity: Array<{ type: string; score: string }>;
    reference_urls: string[];
  }>;
  affected: Array<{ advisory_id: string; ecosystem: string; name: string; purl: string | null; ranges: StoredRange[]; listed_versions: number }>;
  cpes: Array<{
    criteria: string;
    vendor: string;
    product: string;
    version_start_including: string | null;
    version_start_excluding: string | null;
    version_end_including: string | null;
    version_end_excluding: string | null;
  }>;
}

/** Upper-cases a CVE id and checks its shape; 400 otherwise. */
export function normalizeCveId(text: string): string {
  const id = text.trim().toUpperCase();
  if (!CVE_ID.test(id)) throw badRequest(`malformed CVE id "${text}": expected CVE-YYYY-NNNN`);
  return id;
}

/** Dates come back from pg as 'YYYY-MM-DD'; from PGlite's own parser possibly as Date. */
function dateOnly(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  return String(value).slice(0, 10);
}

/** URLs in a KEV `notes` field ("… ; https://… ; https://nvd…"). */
function notesUrls(notes: string): string[] {
  return notes.match(/https?:\/\/[^\s;]+/g) ?? [];
}

export interface KevListQuery {
  vendor?: string;
  product?: string;
  date_added_from?: string;
  date_added_to?: string;
  ransomware?: 'known' | 'unknown';
  cwe?: string;
  search?: string;
  sort?: string;
}

const SORTS: Record<string, [string, 'asc' | 'desc']> = lookupTable({
  date_added: ['k.date_added', 'asc'],
  '-date_added': ['k.date_added', 'desc'],
  due_date: ['k.due_date', 'asc'],
  '-due_date': ['k.due_date', 'desc'],
  cve_id: ['k.cve_id', 'asc'],
  '-cve_id': ['k.cve_id', 'desc'],
  epss: ['e.epss', 'asc'],
  '-epss': ['e.epss', 'desc'],
});

// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createVulnService(deps: Deps) {
  const db = deps.database.db;

  return {
    async getCve(rawId: string) {
      const cveId = normalizeCveId(rawId);
      // One round trip (each query costs a millisecond on the embedded database): the KEV, EPSS and
      // NVD rows side by side, the advisories, affected packages and CPE matches as JSON arrays.
      const found = await sql<CveRow>`
        WITH q AS (SELECT ${cveId}::text AS id),
        -- Materialised so the planner finds the advisories through the GIN index, not by walking
        -- the primary key in id order and testing every row.
        matched AS MATERIALIZED (
          SELECT id, summary, details, aliases, modified, published, severity, reference_urls
          FROM vulndb_osv_advisories WHERE cve_ids @> ARRAY[${cveId}]::text[]
        ),
        adv AS (SELECT * FROM matched ORDER BY id LIMIT 100)
        SELECT
          to_jsonb(n) - 'content_hash' AS nvd, to_jsonb(k) - 'content_hash' AS kev, to_jsonb(e) AS epss,
          (SELECT data_version FROM vulndb_sources WHERE source = 'epss') AS epss_model,
          (SELECT data_date FROM vulndb_sources WHERE source = 'epss') AS epss_date,
          (SELECT coalesce(json_agg(a ORDER BY a.id), '[]'::json) FROM adv a) AS advisories,
          (SELECT coalesce(json_agg(f ORDER BY f.advisory_id, f.idx), '[]'::json)
             FROM (SELECT af.advisory_id, af.idx, af.ecosystem, af.name, af.purl, af.ranges, cardinality(af.versions) AS listed_versions
                   FROM vulndb_osv_affected af JOIN adv ON adv.id = af.advisory_id
                   ORDER BY af.advisory_id, af.idx LIMIT 500) f) AS affected,
          (SELECT coalesce(json_agg(m ORDER BY m.config_index, m.node_index, m.match_index), '[]'::json)
             FROM (SELECT config_index, node_index, match_index, criteria, vendor, product, version_start_including, version_start_excluding,
                     version_end_including, version_end_excluding
                   FROM vulndb_cpe_matches WHERE cve_id = q.id AND vulnerable
                   ORDER BY config_index, node_index, match_index LIMIT 200) m) AS cpes
        FROM q
        LEFT JOIN vulndb_cves n ON n.cve_id = q.id
        LEFT JOIN vulndb_kev k ON k.cve_id = q.id
        LEFT JOIN vulndb_epss e ON e.cve_id = q.id`.execute(db);
      const row = found.rows[0]!;
      const { nvd, kev, epss } = row;
      const osv = row.advisories;
      const affected = row.affected;
      const cpes = row.cpes;
      const meta = { model: row.epss_model, date: row.epss_date };
      const timestamp = (value: string | null | undefined) => (value ? new Date(value) : null);
      if (!nvd && !kev && !epss && osv.length === 0) throw notFound(`${cveId} is not known to the vulnerability store`);
      // CVSS: the NVD metric, else one computed from an advisory's CVSS 3 vector.
      let cvss = {
        score: nvd?.cvss_v3_score ?? null,
        severity: nvd?.cvss_v3_severity ?? null,
        vector: nvd?.cvss_v3_vector ?? null,
        source: nvd?.cvss_v3_score != null ? 'nvd' : null,
      } as {
        score: number | null;
        severity: string | null;
        vector: string | null;
        source: 'nvd' | 'osv' | null;
      };
      if (cvss.score === null) {
        for (const advisory of osv) {
          const vector = advisory.severity.find((s) => s.type === 'CVSS_V3')?.score;
          const score = vector ? cvss3BaseScore(vector) : null;
          if (vector && score !== null) {
            cvss = { score, severity: cvssSeverity(score), vector, source: 'osv' };
            break;
          }
        }
      }
      const firstCpe = cpes[0];
      const references = [...new Set([...(nvd?.reference_urls ?? []), ...(kev ? notesUrls(kev.notes) : []), ...osv.flatMap((a) => a.reference_urls)])];
      const sources: VulnSource[] = [];
      if (kev) sources.push('kev');
      if (epss) sources.push('epss');
      if (nvd) sources.push('nvd');
      if (osv.length) sources.push('osv');
      return {
        cve_id: cveId,
        description: nvd?.description ?? kev?.short_description ?? osv[0]?.summary ?? osv[0]?.details ?? null,
        cvss_v3_score: cvss.score,
        cvss_v3_severity: cvss.severity,
        cvss_v3_vector: cvss.vector,
        cvss_v3_source: cvss.source,
        cvss_v4_score: nvd?.cvss_v4_score ?? null,
        cvss_v4_severity: nvd?.cvss_v4_severity ?? null,
        is_kev: Boolean(kev),
        kev_date_added: dateOnly(kev?.date_added),
        kev_due_date: dateOnly(kev?.due_date),
        kev_vulnerability_name: kev?.vulnerability_name ?? null,
        kev_required_action: kev?.required_action ?? null,
        kev_notes: kev?.notes ?? null,
        known_ransomware_campaign_use: (kev?.known_ransomware_campaign_use as 'Known' | 'Unknown' | undefined) ?? null,
        epss_score: epss?.epss ?? null,
        epss_percentile: epss?.percentile ?? null,
        epss_model_version: epss ? meta.model : null,
        epss_score_date: epss ? meta.date : null,
        vendor_project: kev?.vendor_project ?? firstCpe?.vendor ?? null,
        product_name: kev?.product ?? firstCpe?.product ?? null,
        references,
        cwes: [...new Set([...(nvd?.cwes ?? []), ...(kev?.cwes ?? [])])],
        published: timestamp(nvd?.published ?? osv[0]?.published),
        last_modified: timestamp(nvd?.last_modified),
        vuln_status: nvd?.vuln_status ?? null,
        affected_packages: affected.map((a) => ({
          advisory_id: a.advisory_id,
          ecosystem: a.ecosystem,
          name: a.name,
          purl: a.purl,
          ranges: a.ranges,
          listed_versions: a.listed_versions,
        })),
        affected_cpes: cpes.map((c) => ({
          criteria: c.criteria,
          version_start_including: c.version_start_including,
          version_start_excluding: c.version_start_excluding,
          version_end_including: c.version_end_including,
          version_end_excluding: c.version_end_excluding,
        })),
        advisories: osv.map((a) => ({ id: a.id, summary: a.summary, aliases: a.aliases, modified: timestamp(a.modified) })),
        sources,
      };
    },

    async check(rawId: string, threshold = EPSS_THRESHOLD) {
      const cveId = normalizeCveId(rawId);
      const found = await sql<{
        date_added: string | null;
        due_date: string | null;
        known_ransomware_campaign_use: string | null;
        epss: number | null;
        percentile: number | null;
        known: boolean;
      }>`
        WITH q AS (SELECT ${cveId}::text AS id),
        -- Materialised: found through the GIN index (an EXISTS may be planned as a scan).
        advisory AS MATERIALIZED (SELECT id FROM vulndb_osv_advisories WHERE cve_ids @> ARRAY[${cveId}]::text[])
        SELECT k.date_added, k.due_date, k.known_ransomware_campaign_use, e.epss, e.percentile,
          k.cve_id IS NOT NULL OR e.cve_id IS NOT NULL
            OR EXISTS (SELECT 1 FROM vulndb_cves c WHERE c.cve_id = q.id)
            OR EXISTS (SELECT 1 FROM advisory) AS known
        FROM q
        LEFT JOIN vulndb_kev k ON k.cve_id = q.id
        LEFT JOIN vulndb_epss e ON e.cve_id = q.id`.execute(db);
      const row = found.rows[0]!;
      const kev = row.date_added ? { date_added: row.date_added, due_date: row.due_date, known_ransomware_campaign_use: row.known_ransomware_campaign_use } : null;
      const epss = row.epss !== null ? { epss: row.epss, percentile: row.percentile! } : null;
      const reasons: Array<'known_exploited' | 'high_epss'> = [];
      const words: string[] = [];
      if (kev) {
        reasons.push('known_exploited');
        words.push(`in the CISA KEV catalog since ${dateOnly(kev.date_added)}${kev.due_date ? ` (remediation due ${dateOnly(kev.due_date)})` : ''}`);
      } else {
        words.push('not in the CISA KEV catalog');
      }
      if (epss) {
        const high = epss.epss >= threshold;
        if (high) reasons.push('high_epss');
        words.push(`EPSS ${epss.epss} (percentile ${epss.percentile}) is ${high ? 'at or above' : 'below'} the threshold ${threshold}`);
      } else {
        words.push('no EPSS score');
      }
      return {
        cve_id: cveId,
        known: row.known,
        flagged: reasons.length > 0,
        reasons,
        reason: words.join('; '),
        is_kev: Boolean(kev),
        kev_date_added: dateOnly(kev?.date_added),
        kev_due_date: dateOnly(kev?.due_date),
        known_ransomware_campaign_use: kev?.known_ransomware_campaign_use ?? null,
        epss_score: epss?.epss ?? null,
        epss_percentile: epss?.percentile ?? null,
        epss_threshold: threshold,
      };
    },

    async listKev(query: KevListQuery, page: PageRequest) {
      if (query.date_added_from && query.date_added_to && query.date_added_from > query.date_added_to) {
        throw badRequest('date_added_from is after date_added_to');
      }
      let base = db.selectFrom('vulndb_kev as k').leftJoin('vulndb_epss as e', 'e.cve_id', 'k.cve_id');
      if (query.vendor) base = base.where(sql<boolean>`lower(k.vendor_project) = lower(${query.vendor})`);
      if (query.product) base = base.where(sql<boolean>`lower(k.product) = lower(${query.product})`);
      if (query.date_added_from) base = base.where('k.date_added', '>=', query.date_added_from);
      if (query.date_added_to) base = base.where('k.date_added', '<=', query.date_added_to);
      if (query.ransomware) base = base.where(sql<boolean>`lower(k.known_ransomware_campaign_use) = ${query.ransomware}`);
      if (query.cwe) base = base.where(sql<boolean>`k.cwes @> ARRAY[${query.cwe}]::text[]`);
      if (query.search) {
        const pattern = likePattern(query.search);
        base = base.where(
          sql<boolean>`(k.cve_id ILIKE ${pattern} OR k.vendor_project ILIKE ${pattern} OR k.product ILIKE ${pattern}
            OR k.vulnerability_name ILIKE ${pattern} OR k.short_description ILIKE ${pattern})`,
        );
      }
      const [column, direction] = SORTS[query.sort ?? '-date_added'] ?? SORTS['-date_added']!;
      const [rows, count] = await Promise.all([
        base
          .select([
            'k.cve_id',
            'k.vendor_project',
            'k.product',
            'k.vulnerability_name',
            'k.date_added',
            'k.due_date',
            'k.short_description',
            'k.required_action',
            'k.known_ransomware_campaign_use',
            'k.notes',
            'k.cwes',
            'e.epss as epss_score',
            'e.percentile as epss_percentile',
          ])
          .orderBy(sql.ref(column), sql.raw(`${direction} NULLS LAST`))
          .orderBy('k.cve_id', direction)
          .limit(page.perPage)
          .offset(offsetOf(page))
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      const items = rows.map((r) => ({ ...r, date_added: dateOnly(r.date_added)!, due_date: dateOnly(r.due_date) }));
      return toPage(items, Number(count.n), page);
    },

    async stats() {
      const now = deps.clock.now();
      const [states, counts, schedule] = await Promise.all([
        db.selectFrom('vulndb_sources').selectAll().execute(),
        sql<{ kev: number; epss: number; nvd_cves: number; cpe_matches: number; osv_advisories: number; osv_affected_packages: number }>`
          SELECT (SELECT count(*) FROM vulndb_kev)::int AS kev, (SELECT count(*) FROM vulndb_epss)::int AS epss,
            (SELECT count(*) FROM vulndb_cves)::int AS nvd_cves, (SELECT count(*) FROM vulndb_cpe_matches)::int AS cpe_matches,
            (SELECT count(*) FROM vulndb_osv_advisories)::int AS osv_advisories,
            (SELECT count(*) FROM vulndb_osv_affected)::int AS osv_affected_packages`.execute(db),
        db.selectFrom('job_schedules').select('next_run_at').where('name', '=', SYNC_SCHEDULE).executeTakeFirst(),
      ]);
      const byName = new Map(states.map((s) => [s.source, s]));
      const total = counts.rows[0]!;
      const records: Record<VulnSource, number> = { kev: total.kev, epss: total.epss, nvd: total.nvd_cves, osv: total.osv_advisories };
      let configured: Array<{ source: VulnSource; location: string }> = [];
      try {
        configured = parseSourceSpecs(deps.config.vulndbSources, outboundPolicyOf(deps.config)).map((s) => ({ source: s.source, location: displayLocation(s.location)! }));
      } catch {
        configured = [];
      }
      return {
        generated_at: now,
        sources: SOURCES.map((source) => {
          const s = byName.get(source);
          const reference = s?.data_date ?? s?.last_success_at ?? null;
          return {
            source,
            records: records[source],
            origin: s?.origin ?? null,
            location: displayLocation(s?.location ?? null),
            data_version: s?.data_version ?? null,
            data_date: s?.data_date ?? null,
            data_age_seconds: reference ? Math.max(0, Math.floor((now.getTime() - new Date(reference).getTime()) / 1000)) : null,
            last_success_at: s?.last_success_at ?? null,
            last_sync_at: s?.last_run_at ?? null,
            last_result: s?.last_status ?? null,
            last_error: s?.last_error ?? null,
            last_run_id: s?.last_run_id ?? null,
          };
        }),
        counts: total,
        // Said plainly: without OSV package advisories every host reads "0 vulnerable packages".
        package_matching: { enabled: total.osv_affected_packages > 0, message: total.osv_affected_packages > 0 ? null : NO_PACKAGE_ADVISORIES },
        epss_threshold: EPSS_THRESHOLD,
        sync: {
          configured,
          interval_seconds: Math.round(deps.config.vulndbIntervalMs / 1000),
          next_run_at: configured.length ? (schedule?.next_run_at ?? null) : null,
        },
      };
    },

    async listImports(query: { source?: VulnSource; status?: ImportStatus }, page: PageRequest) {
      let base = db.selectFrom('vulndb_import_runs');
      if (query.source) base = base.where('source', '=', query.source);
      if (query.status) base = base.where('status', '=', query.status);
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy('seq', 'desc').limit(page.perPage).offset(offsetOf(page)).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(rows.map(presentRun), Number(count.n), page);
    },

    async getSyncJob(jobId: string) {
      const job = await db.selectFrom('jobs').selectAll().where('id', '=', jobId).where('kind', 'in', ['vulndb.sync', 'vulndb.seed']).executeTakeFirst();
      if (!job) throw notFound('sync job not found');
      const runs = await db.selectFrom('vulndb_import_runs').selectAll().where('job_id', '=', jobId).orderBy('seq').execute();
      return {
        job_id: job.id,
        kind: job.kind,
        status: job.status,
        attempts: job.attempts,
        max_attempts: job.max_attempts,
        created_at: job.created_at,
        started_at: job.started_at,
        finished_at: job.finished_at,
        error: job.last_error,
        runs: runs.map(presentRun),
      };
    },
  };
}

export function presentRun(run: Selectable<Database['vulndb_import_runs']>) {
  const { heartbeat_at: _heartbeat, metadata: _metadata, seq: _seq, stage_id: _stage, ...rest } = run;
  return { ...rest, location: displayLocation(run.location)! };
}

export type VulnService = ReturnType<typeof createVulnService>;
