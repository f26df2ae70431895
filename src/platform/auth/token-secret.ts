import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { json } from '../db/schema.js';

/**
 * The key that signs tokens: CONTROLGRAPH_SECRET, or a random one generated on first use and kept in
 * the database so tokens survive restarts and every process signs alike.
 */
export async function loadTokenKey(db: Kysely<Database>, configured: string | null): Promise<Uint8Array> {
  if (configured) return new TextEncoder().encode(configured);
  await db
    .insertInto('system_settings')
    .values({ key: 'token_secret', value: json(randomBytes(48).toString('base64')), updated_at: new Date() })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db.selectFrom('system_settings').select('value').where('key', '=', 'token_secret').executeTakeFirstOrThrow();
  return new Uint8Array(Buffer.from(row.value as string, 'base64'));
}
