/**
 * A lookup table that outside input may index: it has no prototype, so a key such as "__proto__",
 * "constructor" or "toString" finds nothing instead of an Object.prototype member (which answered 500
 * when a sort or permission name was looked up on a plain object). `key in TABLE` is safe on it too.
 * ESLint refuses a `Record<string, …>` constant initialised with a plain object literal.
 */
export function lookupTable<T>(entries: Record<string, T>): Readonly<Record<string, T>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, T>, entries));
}
