import { describe, expect, it } from 'vitest';
import { SeqGaps } from './seq-gaps.js';

const plain = (gaps: SeqGaps) => gaps.ranges.map((g) => [g.from, g.to]);

describe('SeqGaps', () => {
  it('keeps ranges sorted and fills them one seq at a time', () => {
    const gaps = new SeqGaps(100);
    gaps.add(20, 25, 0);
    gaps.add(3, 5, 0);
    expect(plain(gaps)).toEqual([
      [3, 5],
      [20, 25],
    ]);
    expect(gaps.fill(3)).toBe(true);
    expect(gaps.fill(5)).toBe(true);
    expect(gaps.fill(22)).toBe(true);
    expect(gaps.fill(30)).toBe(false);
    expect(plain(gaps)).toEqual([
      [4, 4],
      [20, 21],
      [23, 25],
    ]);
    gaps.fill(4);
    expect(plain(gaps)).toEqual([
      [20, 21],
      [23, 25],
    ]);
  });

  it('ignores empty ranges', () => {
    const gaps = new SeqGaps(10);
    gaps.add(5, 4, 0);
    expect(gaps.size).toBe(0);
  });

  it('expires holes by the time they were first seen, splits keep that time', () => {
    const gaps = new SeqGaps(10);
    gaps.add(1, 10, 100);
    gaps.add(20, 30, 200);
    gaps.fill(5);
    expect(gaps.expire(150)).toBe(2);
    expect(plain(gaps)).toEqual([[20, 30]]);
  });

  it('gives up the lowest ranges beyond its bound', () => {
    const gaps = new SeqGaps(2);
    gaps.add(1, 1, 0);
    gaps.add(3, 3, 0);
    expect(gaps.add(5, 5, 0)).toBe(1);
    expect(plain(gaps)).toEqual([
      [3, 3],
      [5, 5],
    ]);
    gaps.add(10, 20, 0);
    gaps.fill(15);
    expect(plain(gaps)).toEqual([
      [10, 14],
      [16, 20],
    ]);
  });
});
