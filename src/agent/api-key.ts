import { open } from 'node:fs/promises';
import { UsageError } from './usage-error.js';

/**
 * Reads the API key from its file. The key grants writing reports for a whole tenant, so a file that
 * group or others may read (or write) is refused rather than used: the agent would otherwise run
 * happily for years with a key any local user can copy. Like ssh with a private key, it says which
 * file and how to fix it, and exits 2.
 */
export async function readApiKeyFile(path: string): Promise<string> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw new UsageError(`cannot read the API key file ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new UsageError(`the API key file ${path} is not a regular file`);
    if ((info.mode & 0o077) !== 0) {
      const mode = (info.mode & 0o777).toString(8).padStart(4, '0');
      throw new UsageError(
        `refusing the API key file ${path}: its mode ${mode} lets group or others read it; ` +
          `make it readable by the agent's user only (chmod 600 ${path}) and issue a new key if others may have read it`,
      );
    }
    const key = (await handle.readFile('utf8')).trim();
    if (!key || /\s/.test(key)) throw new UsageError(`the API key file ${path} must hold the key alone, on one line`);
    return key;
  } finally {
    await handle.close();
  }
}
