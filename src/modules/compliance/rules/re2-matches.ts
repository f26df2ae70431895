import { RE2JS } from 're2js';

/**
 * CEL's `matches()` in CEL's own regular-expression dialect, RE2, with a linear-time engine (re2js,
 * a port of RE2/Go regexp). JavaScript's RegExp backtracks: `^(a+)+$` over 32 `a` and a `!` took
 * 20 s and doubles with each `a`. RE2 has no backreferences and no lookaround, which is what makes
 * it linear; a pattern that uses them is refused with RE2's own message.
 */

const compiled = new Map<string, RE2JS>();
const CACHE_LIMIT = 1000;

export class PatternError extends Error {
  override name = 'PatternError';
}

/** The compiled pattern, cached by its text; throws PatternError when RE2 cannot express it. */
export function re2(pattern: string): RE2JS {
  let re = compiled.get(pattern);
  if (re) return re;
  try {
    re = RE2JS.compile(pattern);
  } catch (error) {
    throw new PatternError(patternProblem(pattern, error));
  }
  if (compiled.size >= CACHE_LIMIT) compiled.clear();
  compiled.set(pattern, re);
  return re;
}

/** CEL semantics: true when the pattern matches any part of the text (RE2 PartialMatch). */
export function re2Matches(text: string, pattern: string): boolean {
  return re2(pattern).test(text);
}

function patternProblem(pattern: string, error: unknown): string {
  const reason = (error instanceof Error ? error.message : String(error)).replace(/^error parsing regexp: /, '');
  const shown = pattern.length > 80 ? `${pattern.slice(0, 77)}...` : pattern;
  return `matches() pattern "${shown}" is not valid RE2, CEL's regular-expression syntax (no backreferences, no lookaround): ${reason}`;
}
