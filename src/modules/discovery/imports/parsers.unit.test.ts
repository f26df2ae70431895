import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../../platform/paths.js';
import { detectFormat, DETECT_HEAD_BYTES } from './parsers.js';

const DIR = projectPath('test', 'fixtures', 'imports');
const walk = (dir: string): string[] => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));

/** The format each real sample is, by its file name (test/fixtures/imports, SOURCES*.md). */
function expected(name: string): string {
  if (name.endsWith('.ocsf.json')) return 'prowler-ocsf';
  if (name.endsWith('.asff.json')) return 'prowler-asff';
  if (name.endsWith('.sarif')) return 'sarif';
  if (name.startsWith('aws-config/')) return 'aws-config';
  return 'securityhub-asff';
}

describe('format detection over every sample', () => {
  const samples = walk(DIR)
    .map((f) => relative(DIR, f))
    .filter((f) => /\.(json|sarif)$/.test(f));

  it.each(samples)('%s', (name) => {
    const head = readFileSync(join(DIR, name)).subarray(0, DETECT_HEAD_BYTES).toString('utf8');
    expect(detectFormat(head)).toBe(expected(name));
  });
});
