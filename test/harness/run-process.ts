import { spawn, type SpawnOptions } from 'node:child_process';

/** What a finished child process said. */
export interface ProcessRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end and collects its output. The caller gives the environment in full (the
 * tests that use this run the command in a clean one, so nothing of the test process leaks in).
 * `timeoutMs` kills it with SIGKILL, so a hung child fails its test instead of the whole run.
 */
export function runProcess(command: string, args: string[], options: Omit<SpawnOptions, 'stdio'> & { timeoutMs?: number } = {}): Promise<ProcessRun> {
  const { timeoutMs, ...spawnOptions } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...spawnOptions, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = timeoutMs ? setTimeout(() => child.kill('SIGKILL'), timeoutMs) : null;
    child.on('error', reject);
    child.on('exit', (code) => {
      if (timer) clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
