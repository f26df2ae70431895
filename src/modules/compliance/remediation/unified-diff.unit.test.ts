import { describe, expect, it } from 'vitest';
import { gitApply } from '../../../../test/fixtures/terraform/harness.js';
import { diffLines, splitLines, unifiedDiff } from './unified-diff.js';

const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}\n`).join('');
/** `git apply` of the diff from before to after, on a file holding before: must give after exactly. */
const roundTrip = (before: string, after: string, path = 'main.tf') => {
  const patch = unifiedDiff(path, before, after);
  expect(gitApply({ [path]: before }, patch, path)).toBe(after);
  return patch;
};

describe('splitLines', () => {
  it('keeps line breaks with their lines', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a')).toEqual(['a']);
    expect(splitLines('a\n')).toEqual(['a\n']);
    expect(splitLines('a\r\nb\n\nc')).toEqual(['a\r\n', 'b\n', '\n', 'c']);
  });
});

describe('diffLines', () => {
  it('finds a minimal edit script', () => {
    const a = ['a', 'b', 'c', 'a', 'b', 'b', 'a'];
    const b = ['c', 'b', 'a', 'b', 'a', 'c'];
    const ops = diffLines(a, b);
    expect(ops.filter((o) => o.kind !== ' ')).toHaveLength(5); // the classic Myers example: D = 5
    expect(ops.filter((o) => o.kind !== '+').map((o) => o.line)).toEqual(a);
    expect(ops.filter((o) => o.kind !== '-').map((o) => o.line)).toEqual(b);
  });
});

describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    expect(unifiedDiff('main.tf', 'a\n', 'a\n')).toBe('');
    expect(unifiedDiff('main.tf', '', '')).toBe('');
  });

  it('writes headers, three lines of context and exact counts', () => {
    const before = lines(10);
    const after = before.replace('line 5\n', 'line five\nline 5b\n');
    const patch = roundTrip(before, after);
    expect(patch).toBe('--- a/main.tf\n+++ b/main.tf\n@@ -2,7 +2,8 @@\n line 2\n line 3\n line 4\n-line 5\n+line five\n+line 5b\n line 6\n line 7\n line 8\n');
  });

  it('numbers insertions at the top and the bottom, and a whole new file', () => {
    expect(roundTrip('a\n', 'top\na\n')).toContain('@@ -1,1 +1,2 @@\n+top\n a\n');
    expect(roundTrip('a\n', 'a\nbottom\n')).toContain('@@ -1,1 +1,2 @@\n a\n+bottom\n');
    expect(roundTrip('', 'a\nb\n')).toContain('@@ -0,0 +1,2 @@\n+a\n+b\n');
  });

  it('marks a last line without a line break, on either side', () => {
    expect(roundTrip('a\nb', 'a\nb\n')).toContain('-b\n\\ No newline at end of file\n+b\n');
    expect(roundTrip('a\nb\n', 'a\nb')).toContain('-b\n+b\n\\ No newline at end of file\n');
    expect(roundTrip('a\nb', 'a\nc')).toContain('-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n');
    expect(roundTrip('x\na\nb', 'y\na\nb')).toContain(' b\n\\ No newline at end of file\n');
  });

  it('keeps CRLF line breaks in the patch lines', () => {
    const before = 'a\r\nb\r\nc\r\n';
    const patch = roundTrip(before, 'a\r\nB\r\nc\r\n');
    expect(patch).toContain('-b\r\n+B\r\n');
    roundTrip(before, before.replace(/\r\n/g, '\n'));
  });

  it('splits hunks more than six lines apart and merges closer ones', () => {
    const base = lines(30);
    const far = base.replace('line 5\n', 'five\n').replace('line 13\n', 'thirteen\n'); // 7 equal lines between
    expect(roundTrip(base, far).match(/^@@/gm)).toHaveLength(2);
    const near = base.replace('line 5\n', 'five\n').replace('line 12\n', 'twelve\n'); // 6 equal lines between
    expect(roundTrip(base, near).match(/^@@/gm)).toHaveLength(1);
  });

  it('deletes every line', () => {
    expect(roundTrip('a\nb\n', '')).toContain('@@ -1,2 +0,0 @@\n-a\n-b\n');
  });

  it('quotes unusual paths the way git reads them', () => {
    const patch = roundTrip('a\n', 'b\n', 'dir/we"ird\\name.tf');
    expect(patch.split('\n')[0]).toBe('--- "a/dir/we\\"ird\\\\name.tf"');
    expect(roundTrip('a\n', 'b\n', 'modules/my storage/main.tf').split('\n')[0]).toBe('--- a/modules/my storage/main.tf');
  });

  it('round-trips random edits through git apply', () => {
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let checked = 0;
    for (let round = 0; round < 25; round++) {
      const a = Array.from({ length: random(40) }, () => `l${random(8)}${random(3) === 0 ? '\r' : ''}\n`);
      const b = [...a];
      for (let e = random(6); e > 0; e--) {
        const at = random(b.length + 1);
        if (random(2) === 0 && b.length > 0) b.splice(at, 1);
        else b.splice(at, 0, `n${random(8)}\n`);
      }
      const strip = (l: string[]) => (random(3) === 0 ? l.join('').replace(/\n$/, '') : l.join(''));
      const before = strip(a);
      const after = strip(b);
      if (before === after) continue;
      roundTrip(before, after);
      checked++;
    }
    expect(checked).toBeGreaterThan(15);
  });
});
