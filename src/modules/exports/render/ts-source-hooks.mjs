// Module hooks that let a worker thread run this module's TypeScript source directly (tests run the
// service from source; the built service runs dist/ and never loads this). `./x.js` imports resolve to
// `./x.ts` when only the source exists, and .ts files are transpiled (types stripped) on load. The
// output is cached by content hash, so most workers never load the TypeScript compiler (seconds).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CACHE = join(tmpdir(), 'controlgraph-render-worker-ts');
let compiler = null;

export async function resolve(specifier, context, next) {
  if (context.parentURL?.endsWith('.ts') && specifier.startsWith('.') && specifier.endsWith('.js')) {
    const js = new URL(specifier, context.parentURL);
    const source = new URL(js.href.replace(/\.js$/, '.ts'));
    if (!existsSync(fileURLToPath(js)) && existsSync(fileURLToPath(source))) return next(source.href, context);
  }
  return next(specifier, context);
}

async function transpile(path, text) {
  const cached = join(CACHE, `${createHash('sha256').update(path).update('\0').update(text).digest('hex').slice(0, 40)}.js`);
  try {
    return await readFile(cached, 'utf8');
  } catch {
    // not cached yet
  }
  compiler ??= (await import('typescript')).default;
  const output = compiler.transpileModule(text, {
    fileName: path,
    compilerOptions: { module: compiler.ModuleKind.ESNext, target: compiler.ScriptTarget.ES2022, esModuleInterop: true, sourceMap: false },
  }).outputText;
  await mkdir(CACHE, { recursive: true });
  // Written aside and renamed: a worker reading it meanwhile sees all of it or nothing.
  const temporary = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  await writeFile(temporary, output);
  await rename(temporary, cached);
  return output;
}

export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context);
  const path = fileURLToPath(url);
  return { format: 'module', source: await transpile(path, await readFile(path, 'utf8')), shortCircuit: true };
}
