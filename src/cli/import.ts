import { openAsBlob } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { parseOptions } from './args.js';
import { chooseTarget, CliRefusal, readToken, REMOTE_OPTIONS, ServiceClient, ServiceError, sleep } from './remote.js';

export const importHelp = `Usage: controlgraph import <file> --tenant ID [--format F] [--server URL] [--token-file FILE]

Uploads a scanner's output to the running service (POST /api/v1/tenants/{ID}/imports) and waits
for its import: Prowler JSON-OCSF (v4, v5) and the other formats the service supports. The file may
be gzipped. The format is detected unless --format names it (prowler-ocsf, prowler-asff,
securityhub-asff, sarif, aws-config).

Always goes through the service's API, never to the database behind a running service's back.

  --tenant ID           The tenant to import into (or set CONTROLGRAPH_TENANT).
  --format F            The file's format, when detection should not decide.
  --server URL          The service's URL (or set CONTROLGRAPH_URL). Beside a service on an embedded
                        (pglite://) database it is found by itself: the service's lock records it.
  --token-file FILE     Bearer credential (or set CONTROLGRAPH_TOKEN): an API key or access token
                        with jobs:write in the tenant.

Exits 0 when the import succeeded (records it could not read are listed), 1 when it failed or the
service refused the file (a malformed file names the byte offset).`;

interface ImportView {
  id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  format: string;
  source: string;
  counts: Record<string, number>;
  errors: Array<{ record: number; message: string }>;
  error: string | null;
}

/** Polls the import until it ends, telling on stderr how far it is every few seconds. */
async function awaitImport(client: ServiceClient, path: string): Promise<ImportView> {
  let told = Date.now();
  for (let delay = 200; ; delay = Math.min(delay * 2, 2_000)) {
    const { body } = await client.request<ImportView>('GET', path);
    if (body.status === 'succeeded' || body.status === 'failed') return body;
    if (Date.now() - told > 5_000) {
      told = Date.now();
      process.stderr.write(`import ${body.id}: ${body.status}, ${body.counts.records ?? 0} records read (it goes on if this command stops)\n`);
    }
    await sleep(delay);
  }
}

function summary(view: ImportView): string {
  const c = view.counts;
  return (
    `import ${view.id} (${view.format}, ${view.source || 'no findings'}) ${view.status}: ${c.records} records, ` +
    `${c.findings_created} findings created, ${c.findings_updated} updated, ${c.findings_resolved} resolved, ${c.findings_reopened} reopened, ` +
    `${c.nodes} nodes, ${c.errors} records not read`
  );
}

export async function importCommand(args: string[]): Promise<void> {
  const { values, positional } = parseOptions(args, { values: ['format', 'tenant', ...REMOTE_OPTIONS] });
  if (positional.length !== 1) throw new Error(`import takes one file\n\n${importHelp}`);
  const file = positional[0]!;
  const tenant = values.tenant ?? process.env.CONTROLGRAPH_TENANT;
  if (!tenant) throw new CliRefusal('import: name the tenant with --tenant ID (or CONTROLGRAPH_TENANT)');
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) throw new CliRefusal(`import: ${file} is not a file`);
  const target = await chooseTarget(values);
  if (target.kind !== 'remote') {
    throw new CliRefusal('import: no running service found: start it (controlgraph serve) and pass --server URL (or set CONTROLGRAPH_URL); imports always go through its API');
  }
  const client = ServiceClient.open(target.remote, readToken(values), 'import', 'an API key or access token with jobs:write in the tenant');
  const form = new FormData();
  if (values.format) form.append('format', values.format);
  // A blob backed by the file: fetch streams it, nothing is read into memory first.
  form.append('file', await openAsBlob(file), basename(file));
  let accepted: ImportView & { status_url: string };
  try {
    accepted = (await client.request<ImportView & { status_url: string }>('POST', `/tenants/${encodeURIComponent(tenant)}/imports`, { body: form })).body;
  } catch (error) {
    if (error instanceof ServiceError && error.status === 413) throw new Error(`${error.message} (the service's CONTROLGRAPH_IMPORT_MAX_BYTES)`);
    throw error;
  }
  process.stderr.write(`import ${accepted.id} accepted by ${client.remote.url}; waiting for it\n`);
  const done = await awaitImport(client, accepted.status_url.replace(/^\/api\/v1/, ''));
  for (const e of done.errors.slice(0, 20)) process.stderr.write(`record ${e.record}: ${e.message}\n`);
  if (done.status === 'failed') throw new Error(`${summary(done)}: ${done.error ?? 'no reason given'}`);
  console.log(summary(done));
}
