import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commands } from '../../src/main.js';
import { projectPath } from '../../src/platform/paths.js';
import { PDF_MAX_FINDINGS } from '../../src/modules/exports/reports/render-pdf.js';
import { AgentReport, COLLECTIONS } from '../../src/modules/agents/report-schema.js';

/**
 * The documentation a newcomer follows, checked against the code it describes (issue 21 item 6), so
 * neither can change without the other.
 */

const read = (...path: string[]) => readFileSync(projectPath(...path), 'utf8');
const README = read('README.md');

/** The text of a README section: from its heading to the next heading of the same or a higher level. */
function section(text: string, heading: string): string {
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no section "${heading}"`);
  const level = heading.match(/^#+/)![0].length;
  const rest = text.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`\\n#{1,${level}} `));
  return end < 0 ? rest : rest.slice(0, end);
}

/** The documentation files of the repository (fixtures' source notes are about third-party files). */
function documentationFiles(): string[] {
  return execFileSync('git', ['ls-files', '*.md'], { cwd: projectPath(), encoding: 'utf8' })
    .split('\n')
    .filter((f) => f && !f.startsWith('test/fixtures/'));
}

describe('documentation', () => {
  it('sends nobody to a document the repository does not contain (an interface spec, a contracts section)', () => {
    const found: string[] = [];
    for (const file of documentationFiles()) {
      read(file)
        .split('\n')
        .forEach((line, i) => {
          if (/\bthe spec\b|\bspec's\b|\(spec\)|\bcontracts? (section|§)|\bcontract's\b|\bcontracts §/i.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it("lists every command of the CLI in the README's command table, and no other", () => {
    const table = section(README, '## Command line')
      .split('\n')
      .filter((l) => l.startsWith('| `'));
    const documented = new Set(table.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([a-z-]+)/g)].map((m) => m[1]!)));
    expect([...documented].sort()).toEqual(Object.keys(commands).sort());
  });

  it('shows vulndb import taking a file, a directory or a URL', () => {
    expect(section(README, '## Command line')).toContain('`vulndb import <file-or-dir-or-url>');
  });

  it('says how a credential is presented: Authorization: Bearer, never X-API-Key', () => {
    const tokens = section(README, '### Tokens');
    expect(tokens).toContain('`Authorization: Bearer <access token>`');
    expect(tokens).toContain('`Authorization: Bearer cg_…`');
    expect(tokens).toMatch(/`X-API-Key` is 401/);
  });

  it('says a fresh install has no OSV or NVD data, and how to load it', () => {
    const vulndb = section(README, '## Vulnerability intelligence').replace(/\s+/g, ' ');
    expect(vulndb).toContain('**It has no OSV or NVD data**');
    expect(vulndb).toContain('`package_matching.enabled: false`');
    for (const way of [
      '`npx controlgraph vulndb import <file-or-dir-or-url>',
      '`POST /api/v1/vulndb/imports`',
      '`CONTROLGRAPH_VULNDB_SOURCES` (`osv=<url-or-path>`, `nvd=<url-or-path>`',
    ]) {
      expect(vulndb).toContain(way);
    }
  });

  it('says the PDF report lists every failing control, and where it cuts the findings', () => {
    const exports = read('docs', 'exports.md');
    const pdfRow = exports.split('\n').find((l) => l.startsWith('| `pdf` |'))!;
    expect(pdfRow).toContain('**every** failing control');
    expect(pdfRow).not.toMatch(/At most \d+ failing controls/);
    expect(pdfRow).toContain(`At most ${PDF_MAX_FINDINGS.toLocaleString('en')} findings`);
    // The line render-pdf.ts writes under the cut list.
    expect(pdfRow).toContain('`The N less severe findings are in the JSON and CSV reports.`');
    expect(read('src', 'modules', 'exports', 'reports', 'render-pdf.ts')).toContain('less severe findings are in the JSON and CSV reports.`');
  });

  it("lists each agent report collection's fields as the report schema has them", () => {
    const agents = read('docs', 'agents.md');
    const table = agents.slice(agents.indexOf('| Collection | Fields of each item |')).split('\n\n')[0]!;
    for (const collection of COLLECTIONS) {
      const row = table.split('\n').find((l) => l.trim().startsWith(`| \`${collection}\` |`));
      expect(row, collection).toBeDefined();
      const documented = [...row!.split('|')[2]!.matchAll(/`([a-z_0-9]+)`( \(optional\))?/g)].map((m) => `${m[1]}${m[2] ? '?' : ''}`);
      const item = (AgentReport.properties[collection] as unknown as { items: { properties: Record<string, unknown>; required?: string[] } }).items;
      const required = new Set(item.required ?? []);
      expect(documented, collection).toEqual(Object.keys(item.properties).map((k) => (required.has(k) ? k : `${k}?`)));
    }
  });
});
