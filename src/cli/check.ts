import { openDatabase } from '../platform/db/database.js';
import { migrate } from '../platform/db/migrator.js';
import { checkReadModel, type ConsistencyReport } from '../modules/compliance/rollups/consistency.js';
import { parseOptions } from './args.js';
import { chooseTarget, readToken, REMOTE_HELP, REMOTE_OPTIONS, runLocalOrRemote, ServiceClient, CliRefusal } from './remote.js';

export const checkHelp = `Usage: controlgraph check [--workspace ID] [--repair] [--server URL] [--token-file FILE]

Recomputes the findings read model (the counts behind /controls/status, /controls/gaps,
/findings/grouped and the findings totals) from the findings and unknown evaluations, and compares
it with what the service keeps. Prints each difference; exits 0 when there is none, 1 otherwise.

  --workspace ID        Check one workspace (all by default).
  --repair              Rebuild the rollups of the workspaces that differ from their rows (audit-logged
                        when done through the API).
${REMOTE_HELP}`;

export async function checkCommand(args: string[] = []): Promise<void> {
  const { values, flags, positional } = parseOptions(args, { values: ['workspace', ...REMOTE_OPTIONS], flags: ['repair'] });
  if (positional.length) throw new CliRefusal(`check takes no arguments\n\n${checkHelp}`);
  const repair = flags.has('repair');
  const target = await chooseTarget(values);
  const report = await runLocalOrRemote(
    target,
    async (config) => {
      const database = await openDatabase(config.databaseUrl, { owner: 'controlgraph check' });
      try {
        await migrate(database.db);
        return await checkReadModel(database.db, { workspaceId: values.workspace, repair });
      } finally {
        await database.close();
      }
    },
    async (remote) => {
      const client = ServiceClient.open(remote, readToken(values), 'check', "a system-admin's access token");
      const query: Record<string, string> = { repair: String(repair) };
      if (values.workspace) query.workspace_id = values.workspace;
      return (await client.request<ConsistencyReport>('POST', '/system/read-model/check', { query })).body;
    },
  );
  console.log(describe(report));
  if (!report.consistent && report.repaired === 0) process.exitCode = 1;
}

function describe(report: ConsistencyReport): string {
  const lines = [`read model: ${report.workspaces} workspace(s) compared, ${report.difference_count} difference(s)`];
  for (const d of report.differences) {
    lines.push(`  ${d.rollup} workspace ${d.workspace_id} ${JSON.stringify(d.key)}: stored ${d.stored}, recomputed ${d.expected}`);
  }
  if (report.difference_count > report.differences.length) lines.push(`  … and ${report.difference_count - report.differences.length} more`);
  if (report.repaired) lines.push(`repaired: ${report.repaired} workspace(s) rebuilt from their findings`);
  return lines.join('\n');
}
