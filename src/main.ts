import { VERSION } from './version.js';
import { lookupTable } from './platform/lookup-table.js';

interface Command {
  /** The line `controlgraph --help` shows. */
  summary: string;
  /** Loaded only when the command runs (or shows its help): `controlgraph agent` on a host must not
   * pull the whole server into memory. */
  load(): Promise<{ help: string; run(args: string[]): Promise<void> }>;
}

/** Commands of the controlgraph CLI; later modules add theirs here. */
export const commands: Record<string, Command> = lookupTable({
  serve: {
    summary: 'Starts the service (API, worker and scheduler; --role picks some).',
    load: async () => {
      const m = await import('./cli/serve.js');
      return { help: m.serveHelp, run: m.serve };
    },
  },
  migrate: {
    summary: 'Applies the pending database migrations to DATABASE_URL and exits.',
    load: async () => {
      const m = await import('./cli/migrate.js');
      return { help: m.migrateHelp, run: m.migrateCommand };
    },
  },
  check: {
    summary: 'Recomputes the findings read model from the findings and compares (--repair rebuilds it).',
    load: async () => {
      const m = await import('./cli/check.js');
      return { help: m.checkHelp, run: m.checkCommand };
    },
  },
  user: {
    summary: 'Creates a user in a tenant, or gives an existing user a role there.',
    load: async () => {
      const m = await import('./cli/user.js');
      return { help: m.userHelp, run: m.userCommand };
    },
  },
  vulndb: {
    summary: 'Imports and syncs the vulnerability store (CISA KEV, FIRST EPSS, NVD, OSV).',
    load: async () => {
      const m = await import('./cli/vulndb.js');
      return { help: m.vulndbHelp, run: m.vulndbCommand };
    },
  },
  import: {
    summary: "Imports a scanner's output (Prowler JSON-OCSF, …) through the running service's API.",
    load: async () => {
      const m = await import('./cli/import.js');
      return { help: m.importHelp, run: m.importCommand };
    },
  },
  demo: {
    summary: "Loads the demo estate (CloudMapper's demo AWS account, from recorded responses) into a tenant.",
    load: async () => {
      const m = await import('./cli/demo.js');
      return { help: m.demoHelp, run: m.demoCommand };
    },
  },
  agent: {
    summary: 'Runs the host agent: scans this Linux host and sends reports to the server.',
    load: async () => {
      const m = await import('./cli/agent.js');
      return { help: m.agentHelp, run: m.agentCommand };
    },
  },
});

const usage = `controlgraph ${VERSION}

Usage: controlgraph <command> [options]

Commands:
${Object.entries(commands)
  .map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`)
  .join('\n')}

Run "controlgraph <command> --help" for a command's options.`;

export async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage);
    return;
  }
  if (name === '--version') {
    console.log(VERSION);
    return;
  }
  const entry = commands[name];
  if (!entry) {
    console.error(`unknown command "${name}"\n\n${usage}`);
    process.exitCode = 2;
    return;
  }
  const command = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(command.help);
    return;
  }
  await command.run(rest);
}
