import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Which module reads or writes which other module's tables (issue 26 item 1: a module reaches
 * another's tables only through that module's exported functions). A table belongs to the module
 * whose tables.ts declares it in the Database interface; a reference is a Kysely call naming the
 * table (`selectFrom('nodes as n')`, `innerJoin('edges')`, …) or raw SQL (`FROM nodes`, `JOIN edges`,
 * `INSERT INTO`, `UPDATE`, `DELETE FROM`).
 */

const MODULES = join(import.meta.dirname, '..', '..', 'src', 'modules');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return filesUnder(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** table → owning module: the module whose files declare it in the Database interface. */
export function tableOwners(): Map<string, string> {
  const owners = new Map<string, string>();
  for (const file of filesUnder(MODULES)) {
    const text = readFileSync(file, 'utf8');
    const body = /interface Database \{([\s\S]*)/.exec(text)?.[1];
    if (!body) continue;
    const module = relative(MODULES, file).split('/')[0]!;
    // `name: {` (columns inline) or `name: SomeTable;`, at the interface's indentation.
    for (const match of body.matchAll(/^ {4}(\w+): [{A-Z]/gm)) owners.set(match[1]!, module);
  }
  return owners;
}

const KYSELY = /\b(?:selectFrom|updateTable|insertInto|deleteFrom|innerJoin|leftJoin|rightJoin|fullJoin|with)\(\s*'(\w+)/g;
const RAW = /\b(?:FROM|JOIN|INTO|UPDATE)\s+(\w+)\b/g;

/** `<file relative to src/modules> <table>` → how many references, for tables of another module. */
export function crossModuleReferences(): Record<string, number> {
  const owners = tableOwners();
  const counts: Record<string, number> = {};
  for (const file of filesUnder(MODULES)) {
    const path = relative(MODULES, file);
    const module = path.split('/')[0]!;
    const text = readFileSync(file, 'utf8');
    for (const pattern of [KYSELY, RAW]) {
      for (const match of text.matchAll(pattern)) {
        const owner = owners.get(match[1]!);
        if (!owner || owner === module) continue;
        const key = `${path} ${match[1]}`;
        counts[key] = (counts[key] ?? 0) + 1;
      }
    }
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}
