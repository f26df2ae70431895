/**
 * Sequence numbers the outbox reader has skipped over. `outbox_events.seq` is taken from a sequence
 * when a row is inserted, but transactions commit in any order: an audit that took seq 10..500 and
 * commits after a short transaction that took 501 leaves 10..500 invisible when 501 is read. A reader
 * that only asks for `seq > last seen` would lose them, so it remembers the holes it skipped and asks
 * for them again until they are filled or too old (a rolled-back transaction leaves a hole forever).
 *
 * Holes are kept as inclusive ranges, sorted by `from`, so a large in-flight transaction costs one entry.
 */
export interface SeqGap {
  from: number;
  to: number;
  /** When the hole was first seen (ms since the epoch, from the injected clock). */
  since: number;
}

export class SeqGaps {
  private gaps: SeqGap[] = [];

  /** @param maxRanges beyond this many ranges the lowest ones are given up (and counted as dropped). */
  constructor(private readonly maxRanges: number) {}

  get size(): number {
    return this.gaps.length;
  }

  get ranges(): readonly SeqGap[] {
    return this.gaps;
  }

  clear(): void {
    this.gaps = [];
  }

  /** Records the hole from..to (inclusive); returns how many ranges had to be given up. */
  add(from: number, to: number, since: number): number {
    if (to < from) return 0;
    const at = this.gaps.findIndex((g) => g.from > from);
    const gap = { from, to, since };
    if (at === -1) this.gaps.push(gap);
    else this.gaps.splice(at, 0, gap);
    return this.trim();
  }

  /** A row with this seq became visible: removes it from its hole. Returns whether it was one. */
  fill(seq: number): boolean {
    const index = this.indexOf(seq);
    if (index === -1) return false;
    const gap = this.gaps[index]!;
    if (gap.from === gap.to) this.gaps.splice(index, 1);
    else if (seq === gap.from) gap.from++;
    else if (seq === gap.to) gap.to--;
    else {
      this.gaps.splice(index, 1, { from: gap.from, to: seq - 1, since: gap.since }, { from: seq + 1, to: gap.to, since: gap.since });
      this.trim();
    }
    return true;
  }

  /** Gives up holes first seen before `before`; returns how many ranges were dropped. */
  expire(before: number): number {
    const kept = this.gaps.filter((g) => g.since >= before);
    const dropped = this.gaps.length - kept.length;
    this.gaps = kept;
    return dropped;
  }

  private indexOf(seq: number): number {
    let lo = 0;
    let hi = this.gaps.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const gap = this.gaps[mid]!;
      if (seq < gap.from) hi = mid - 1;
      else if (seq > gap.to) lo = mid + 1;
      else return mid;
    }
    return -1;
  }

  private trim(): number {
    // The lowest holes are the oldest allocations, the likeliest to be rollbacks that never fill.
    const excess = this.gaps.length - this.maxRanges;
    if (excess <= 0) return 0;
    this.gaps.splice(0, excess);
    return excess;
  }
}
