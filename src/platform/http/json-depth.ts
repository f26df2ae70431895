/**
 * The deepest nesting a JSON request body may have (objects and arrays, the body itself counting as
 * one). Node properties carry AWS Config items, whose deepest documents nest about a dozen levels;
 * 20,000 levels made serialising the value for the database overflow the stack (a 500).
 */
export const MAX_PROPERTIES_DEPTH = 64;

/**
 * True when the JSON text nests deeper than `max`. Scans the text once without recursion, so it is
 * safe on any input and runs before JSON.parse builds the value.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}
