import { UsageError } from './usage-error.js';

/**
 * /etc/controlgraph-agent/agent.conf: `key = value` lines, `#` comments, blank lines. Each key is an
 * option of the command line without its `--` and with `_` for `-` (`api_key_file` is
 * `--api-key-file`); `fim` may repeat; booleans are yes/no. The file becomes arguments placed before
 * the command line's, so one code path checks both. The API key itself is refused here as on the
 * command line: the file is world-readable configuration, the key goes in its own 0600 file.
 */

const VALUE_KEYS = new Set(['server', 'api_key_file', 'interval', 'collectors', 'disable', 'agent_id', 'region', 'state_dir', 'root', 'retries', 'spool_max_mb', 'spool_max_age']);

export function configToArgs(text: string, source: string): string[] {
  const args: string[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const where = `${source}:${index + 1}`;
    const m = /^([a-z_]+)\s*=\s*(.*)$/.exec(line);
    if (!m) throw new UsageError(`${where}: expected "key = value"`);
    const key = m[1]!;
    const value = m[2]!.replace(/^"(.*)"$/, '$1');
    if (key === 'api_key') throw new UsageError(`${where}: api_key is not accepted here; put the key in its own file (chmod 600) and name it with api_key_file`);
    if (key === 'fim') {
      if (value) args.push(`--fim=${value}`);
    } else if (key === 'default_fim') {
      if (!/^(yes|no)$/.test(value)) throw new UsageError(`${where}: default_fim must be yes or no`);
      if (value === 'no') args.push('--no-default-fim');
    } else if (VALUE_KEYS.has(key)) {
      // An empty value leaves the default (e.g. `disable =` in the shipped file).
      if (value) args.push(`--${key.replace(/_/g, '-')}=${value}`);
    } else {
      throw new UsageError(`${where}: unknown key "${key}"`);
    }
  });
  return args;
}
