/**
 * The filter language of applications and asset groups: a tokenizer and a recursive-descent parser
 * (no eval, no regular-expression "parsing" of the whole text). Grammar, lowest precedence first:
 *
 *   filter     := or EOF
 *   or         := and ( OR and )*
 *   and        := not ( AND not )*
 *   not        := NOT not | primary
 *   primary    := '(' or ')' | comparison
 *   comparison := attribute ( ( '=' | '!=' | CONTAINS ) value
 *                           | IN '(' value ( ',' value )* ')'
 *                           | EXISTS )
 *   attribute  := WORD | WORD STRING      (tags."aws:cloudformation:stack-name": a quoted part right after a dot)
 *   value      := STRING | WORD
 *
 * Keywords (AND, OR, NOT, CONTAINS, IN, EXISTS) are case-insensitive; a value spelled like one must
 * be quoted. Strings take single or double quotes with backslash escapes. Every error carries the
 * 0-based character position where it was found.
 */
import { FilterError } from './errors.js';
import { resolveAttribute, type Attribute, type AttributePart } from './attributes.js';

export const MAX_FILTER_LENGTH = 4000;
const MAX_NESTING = 64;
const MAX_IN_VALUES = 1000;

export { FilterError };

export type Operator = '=' | '!=' | 'contains' | 'in' | 'exists';

export type FilterNode =
  | { kind: 'and'; left: FilterNode; right: FilterNode }
  | { kind: 'or'; left: FilterNode; right: FilterNode }
  | { kind: 'not'; operand: FilterNode }
  | { kind: 'compare'; attribute: Attribute; op: Operator; values: string[]; position: number };

type TokenKind = 'word' | 'string' | 'lparen' | 'rparen' | 'comma' | 'eq' | 'neq' | 'eof';

interface Token {
  kind: TokenKind;
  text: string;
  /** The string's content (unescaped) or the word itself. */
  value: string;
  start: number;
  end: number;
}

const KEYWORDS = new Set(['and', 'or', 'not', 'contains', 'in', 'exists']);
/** Characters that end a bare word. */
const DELIMITERS = new Set(['(', ')', ',', '=', '!', '"', "'", '<', '>']);

function isSpace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\f' || ch === '\v';
}

export function tokenize(text: string): Token[] {
  // PostgreSQL text cannot hold NUL: say where it is rather than fail in the database.
  const nul = text.indexOf('\u0000');
  if (nul >= 0) throw new FilterError('the filter holds a NUL character', nul);
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (isSpace(ch)) {
      i++;
      continue;
    }
    const start = i;
    if (ch === '(') tokens.push({ kind: 'lparen', text: ch, value: ch, start, end: ++i });
    else if (ch === ')') tokens.push({ kind: 'rparen', text: ch, value: ch, start, end: ++i });
    else if (ch === ',') tokens.push({ kind: 'comma', text: ch, value: ch, start, end: ++i });
    else if (ch === '=') {
      // `==` is accepted as a synonym of `=`.
      i += text[i + 1] === '=' ? 2 : 1;
      tokens.push({ kind: 'eq', text: text.slice(start, i), value: '=', start, end: i });
    } else if (ch === '!') {
      if (text[i + 1] !== '=') throw new FilterError(`unexpected character "!" (did you mean "!=" or NOT?)`, start);
      i += 2;
      tokens.push({ kind: 'neq', text: '!=', value: '!=', start, end: i });
    } else if (ch === '<' || ch === '>') {
      if (ch === '<' && text[i + 1] === '>') {
        i += 2;
        tokens.push({ kind: 'neq', text: '<>', value: '!=', start, end: i });
      } else {
        throw new FilterError(`unsupported operator "${ch}": use =, !=, contains, in or exists`, start);
      }
    } else if (ch === '"' || ch === "'") {
      const quote = ch;
      let value = '';
      i++;
      for (;;) {
        if (i >= text.length) throw new FilterError(`unterminated string (opened with ${quote})`, start);
        const c = text[i]!;
        if (c === '\\') {
          if (i + 1 >= text.length) throw new FilterError('unterminated string: a backslash ends the filter', i);
          value += text[i + 1];
          i += 2;
          continue;
        }
        if (c === quote) {
          i++;
          break;
        }
        value += c;
        i++;
      }
      tokens.push({ kind: 'string', text: text.slice(start, i), value, start, end: i });
    } else {
      while (i < text.length && !isSpace(text[i]!) && !DELIMITERS.has(text[i]!)) i++;
      const word = text.slice(start, i);
      tokens.push({ kind: 'word', text: word, value: word, start, end: i });
    }
  }
  tokens.push({ kind: 'eof', text: '', value: '', start: text.length, end: text.length });
  return tokens;
}

function describe(token: Token): string {
  if (token.kind === 'eof') return 'end of the filter';
  if (token.kind === 'string') return `the string ${token.text}`;
  return `"${token.text}"`;
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private next(): Token {
    const token = this.tokens[this.index]!;
    if (token.kind !== 'eof') this.index++;
    return token;
  }

  private isKeyword(token: Token, keyword: string): boolean {
    return token.kind === 'word' && token.value.toLowerCase() === keyword;
  }

  parse(): FilterNode {
    if (this.peek().kind === 'eof') throw new FilterError('the filter is empty', 0);
    const node = this.or();
    const rest = this.peek();
    if (rest.kind !== 'eof') {
      throw new FilterError(`unexpected ${describe(rest)}: expected AND, OR or the end of the filter`, rest.start);
    }
    return node;
  }

  private or(): FilterNode {
    let left = this.and();
    while (this.isKeyword(this.peek(), 'or')) {
      this.next();
      left = { kind: 'or', left, right: this.and() };
    }
    return left;
  }

  private and(): FilterNode {
    let left = this.not();
    while (this.isKeyword(this.peek(), 'and')) {
      this.next();
      left = { kind: 'and', left, right: this.not() };
    }
    return left;
  }

  private not(): FilterNode {
    const token = this.peek();
    if (this.isKeyword(token, 'not')) {
      this.next();
      return this.nested(token, () => ({ kind: 'not', operand: this.not() }));
    }
    return this.primary();
  }

  private nested<T>(at: Token, inner: () => T): T {
    if (++this.depth > MAX_NESTING) throw new FilterError(`the filter nests deeper than ${MAX_NESTING} levels`, at.start);
    try {
      return inner();
    } finally {
      this.depth--;
    }
  }

  private primary(): FilterNode {
    const token = this.peek();
    if (token.kind === 'lparen') {
      this.next();
      const inner = this.nested(token, () => this.or());
      const close = this.next();
      if (close.kind !== 'rparen') throw new FilterError(`unexpected ${describe(close)}: expected ")" closing the "(" at position ${token.start}`, close.start);
      return inner;
    }
    return this.comparison();
  }

  private comparison(): FilterNode {
    const first = this.next();
    if (first.kind !== 'word' || KEYWORDS.has(first.value.toLowerCase())) {
      throw new FilterError(`unexpected ${describe(first)}: expected an attribute such as name, type, tags.<key> or vpc_id`, first.start);
    }
    const parts: AttributePart[] = [{ text: first.value, quoted: false }];
    let end = first.end;
    // tags."key with spaces" or properties.configuration."odd.key".x: strings glued to a dot.
    while (parts[parts.length - 1]!.text.endsWith('.') && this.peek().kind === 'string' && this.peek().start === end) {
      const quoted = this.next();
      parts.push({ text: quoted.value, quoted: true });
      end = quoted.end;
      const after = this.peek();
      if (after.kind === 'word' && after.start === end && after.value.startsWith('.')) {
        parts.push({ text: this.next().value, quoted: false });
        end = after.end;
      }
    }
    const attribute = resolveAttribute(parts, first.start);
    const path = this.tokens
      .slice(this.tokens.indexOf(first), this.index)
      .map((t) => t.text)
      .join('');
    const opToken = this.next();
    if (opToken.kind === 'eq' || opToken.kind === 'neq') {
      return { kind: 'compare', attribute, op: opToken.kind === 'eq' ? '=' : '!=', values: [this.value()], position: first.start };
    }
    if (this.isKeyword(opToken, 'contains')) {
      const value = this.value();
      if (value === '') throw new FilterError('contains needs a non-empty value', opToken.end);
      return { kind: 'compare', attribute, op: 'contains', values: [value], position: first.start };
    }
    if (this.isKeyword(opToken, 'exists')) return { kind: 'compare', attribute, op: 'exists', values: [], position: first.start };
    if (this.isKeyword(opToken, 'in')) {
      const open = this.next();
      if (open.kind !== 'lparen') throw new FilterError(`unexpected ${describe(open)}: expected "(" after IN`, open.start);
      const values = [this.value()];
      for (;;) {
        const sep = this.next();
        if (sep.kind === 'rparen') break;
        if (sep.kind !== 'comma') throw new FilterError(`unexpected ${describe(sep)}: expected "," or ")" in the IN list`, sep.start);
        values.push(this.value());
        if (values.length > MAX_IN_VALUES) throw new FilterError(`an IN list holds at most ${MAX_IN_VALUES} values`, sep.start);
      }
      return { kind: 'compare', attribute, op: 'in', values, position: first.start };
    }
    throw new FilterError(`unexpected ${describe(opToken)}: expected an operator (=, !=, contains, in, exists) after "${path}"`, opToken.start);
  }

  private value(): string {
    const token = this.next();
    if (token.kind === 'string') return token.value;
    if (token.kind === 'word' && !KEYWORDS.has(token.value.toLowerCase())) return token.value;
    const hint = token.kind === 'word' ? ` (quote it to compare with the word ${token.text})` : '';
    throw new FilterError(`unexpected ${describe(token)}: expected a value${hint}`, token.start);
  }
}

/** Parses a filter; throws FilterError with the position of the first problem. */
export function parseFilter(text: string): FilterNode {
  if (text.length > MAX_FILTER_LENGTH) throw new FilterError(`the filter is longer than ${MAX_FILTER_LENGTH} characters`, MAX_FILTER_LENGTH);
  return new Parser(tokenize(text)).parse();
}

/** A quoted string literal of the language. */
export function quote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** A tag key as written after `tags.`: bare when it can be, quoted otherwise. */
export function tagAttribute(key: string): string {
  return /^[A-Za-z0-9_\-:/@+*.]+$/.test(key) && !key.endsWith('.') ? `tags.${key}` : `tags.${quote(key)}`;
}
