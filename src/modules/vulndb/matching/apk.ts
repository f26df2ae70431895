/**
 * Alpine (apk) version comparison, following apk-tools: a version is
 * `digit{.digit}...{letter}{_suffix{number}}...{~hash}{-r number}`. Components are compared token by
 * token: numbers numerically (a number with a leading zero after the first component compares as a
 * string, as in Gentoo), the single letter by code, suffixes by rank
 * (`_alpha` < `_beta` < `_pre` < `_rc` < no suffix < `_cvs` < `_svn` < `_git` < `_hg` < `_p`), the
 * `-r` revision numerically. When one version runs out first, the longer one is newer unless what
 * follows is a pre-release suffix: `1.2_rc1` < `1.2` < `1.2.1`, `1.2` < `1.2-r1`, `1.2a` < `1.2.1`.
 */
const enum Token {
  InitialDigit,
  Digit,
  Letter,
  Suffix,
  SuffixNumber,
  CommitHash,
  Revision,
  End,
  Invalid,
}

const SUFFIXES = ['alpha', 'beta', 'pre', 'rc', '', 'cvs', 'svn', 'git', 'hg', 'p'];
const NO_SUFFIX = SUFFIXES.indexOf('');

interface State {
  token: Token;
  value: string;
  number: bigint;
  suffix: number;
}

class Tokenizer {
  private pos = 0;
  readonly state: State = { token: Token.InitialDigit, value: '', number: 0n, suffix: -1 };

  constructor(private readonly text: string) {
    this.digits();
  }

  private digits(): void {
    const match = /^\d+/.exec(this.text.slice(this.pos));
    if (!match) {
      this.state.token = Token.Invalid;
      return;
    }
    this.state.value = match[0];
    this.state.number = BigInt(match[0]);
    this.pos += match[0].length;
  }

  next(): void {
    const s = this.state;
    if (this.pos >= this.text.length) {
      s.token = Token.End;
      return;
    }
    const c = this.text[this.pos]!;
    if (c >= 'a' && c <= 'z') {
      if (s.token > Token.Digit) return this.invalid();
      s.value = c;
      s.token = Token.Letter;
      this.pos++;
    } else if (c === '.' || (c >= '0' && c <= '9')) {
      if (c === '.') {
        if (s.token > Token.Digit) return this.invalid();
        this.pos++;
      }
      if (s.token === Token.InitialDigit || s.token === Token.Digit) s.token = Token.Digit;
      else if (s.token === Token.Suffix) s.token = Token.SuffixNumber;
      else return this.invalid();
      this.digits();
    } else if (c === '_') {
      if (s.token > Token.SuffixNumber) return this.invalid();
      const match = /^[a-z]*/.exec(this.text.slice(this.pos + 1))!;
      this.pos += 1 + match[0].length;
      const suffix = match[0] ? SUFFIXES.indexOf(match[0]) : -1;
      if (suffix < 0 || suffix === NO_SUFFIX) return this.invalid();
      s.value = match[0];
      s.suffix = suffix;
      s.token = Token.Suffix;
    } else if (c === '~') {
      if (s.token >= Token.CommitHash) return this.invalid();
      const match = /^[0-9a-fA-F]+/.exec(this.text.slice(this.pos + 1));
      if (!match) return this.invalid();
      this.pos += 1 + match[0].length;
      s.value = match[0];
      s.token = Token.CommitHash;
    } else if (c === '-') {
      if (s.token >= Token.Revision || this.text[this.pos + 1] !== 'r') return this.invalid();
      this.pos += 2;
      s.token = Token.Revision;
      this.digits();
    } else {
      this.invalid();
    }
  }

  private invalid(): void {
    this.state.token = Token.Invalid;
  }
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareTokens(a: State, b: State): number {
  switch (a.token) {
    case Token.Digit:
      // A leading zero makes the component a fraction-like string (1.01 < 1.1 but 1.01 > 1.001).
      if (a.value.startsWith('0') || b.value.startsWith('0')) return compareStrings(a.value, b.value);
      return a.number < b.number ? -1 : a.number > b.number ? 1 : 0;
    case Token.InitialDigit:
    case Token.SuffixNumber:
    case Token.Revision:
      return a.number < b.number ? -1 : a.number > b.number ? 1 : 0;
    case Token.Letter:
      return compareStrings(a.value, b.value);
    case Token.Suffix:
      return Math.sign(a.suffix - b.suffix);
    default:
      return compareStrings(a.value, b.value);
  }
}

export function isValidApkVersion(text: string): boolean {
  const t = new Tokenizer(text);
  while (t.state.token < Token.End) t.next();
  return t.state.token === Token.End;
}

export function compareApk(a: string, b: string): number {
  const ta = new Tokenizer(a.trim());
  const tb = new Tokenizer(b.trim());
  while (ta.state.token === tb.state.token && ta.state.token < Token.End) {
    const r = compareTokens(ta.state, tb.state);
    if (r !== 0) return r;
    ta.next();
    tb.next();
  }
  const x = ta.state;
  const y = tb.state;
  if (x.token === y.token) return 0;
  // Equal so far: the longer version is newer unless it continues with a pre-release suffix.
  if (x.token === Token.Suffix && x.suffix < NO_SUFFIX) return -1;
  if (y.token === Token.Suffix && y.suffix < NO_SUFFIX) return 1;
  if (x.token > y.token) return -1;
  if (y.token > x.token) return 1;
  return 0;
}
