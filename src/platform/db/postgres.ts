/**
 * What the services need to know about PostgreSQL itself, the same on PGlite and pg: which error a
 * unique index raises, and how a user's search text is made literal inside LIKE.
 */

/** A unique-index violation (both drivers report SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === '23505';
}

/** `%text%` for (I)LIKE, with the pattern characters of the text escaped so they match themselves. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
