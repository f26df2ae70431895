/**
 * Malformed, boundary and type-confused values for the OpenAPI fuzzer, generated from JSON schemas
 * with a seeded PRNG so a failing case can be replayed from its seed.
 */
export type Schema = Record<string, any>;

export function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const pick = <T>(rng: () => number, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;

const NASTY_STRINGS = [
  '',
  ' ',
  'a'.repeat(10_001),
  '\u0000',
  '\u202e\u0644\u0627',
  '😀'.repeat(50),
  "'; DROP TABLE nodes; --",
  '${7*7}',
  '../../etc/passwd',
  '%00',
  '<script>alert(1)</script>',
  '\\u0000',
  'NaN',
  '-1',
  '1e309',
  'null',
  '00000000-0000-0000-0000-000000000000',
  'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
  '2026-02-30T25:61:61Z',
  'CVE-9999-99999999999',
  '*',
  '%',
  '_',
  'a,b,,c',
  '-severity',
  // Names of Object.prototype members: an enumeration or a sort looked up on a plain object finds them.
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
];

const NASTY_VALUES: unknown[] = [null, true, false, 0, -1, 1.5, 2 ** 53, -(2 ** 31), 1e308, [], {}, [null], { a: { b: { c: {} } } }, 'x'];

/** A value that satisfies the schema as far as simply possible (the base that mutations start from). */
export function validValue(schema: Schema | undefined, rng: () => number, depth = 0): unknown {
  if (!schema || depth > 6) return null;
  if (schema.enum) return pick(rng, schema.enum);
  if (schema.const !== undefined) return schema.const;
  if (schema.anyOf) return validValue(pick(rng, schema.anyOf), rng, depth + 1);
  if (schema.oneOf) return validValue(pick(rng, schema.oneOf), rng, depth + 1);
  switch (schema.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, prop] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
        if ((schema.required ?? []).includes(key) || rng() < 0.5) out[key] = validValue(prop, rng, depth + 1);
      }
      return out;
    }
    case 'array': {
      const n = Math.max(schema.minItems ?? 0, rng() < 0.5 ? 1 : 0);
      return Array.from({ length: n }, () => validValue(schema.items, rng, depth + 1));
    }
    case 'integer':
      return Math.max(schema.minimum ?? 0, Math.min(schema.maximum ?? 10, 1));
    case 'number':
      return schema.minimum ?? 0.5;
    case 'boolean':
      return rng() < 0.5;
    case 'string':
      if (schema.format === 'uuid') return '8b0f3f5e-6a55-4c4e-9b77-2f1d0e2a1c3b';
      if (schema.format === 'date-time') return '2027-01-01T00:00:00Z';
      if (schema.format === 'date') return '2027-01-01';
      return 'x'.repeat(Math.max(schema.minLength ?? 1, 1));
    default:
      return 'x';
  }
}

/** A mutation of a value: the wrong type, a boundary, a nasty string, a missing or extra field. */
export function mutate(value: unknown, schema: Schema | undefined, rng: () => number): unknown {
  const roll = rng();
  if (roll < 0.25) return pick(rng, NASTY_VALUES);
  if (roll < 0.5) return pick(rng, NASTY_STRINGS);
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    const props = (schema?.properties ?? {}) as Record<string, Schema>;
    if (roll < 0.65 && keys.length) {
      delete copy[pick(rng, keys)];
    } else if (roll < 0.75) {
      copy[pick(rng, ['__proto__', 'constructor', 'unexpected', 'id', 'tenant_id', 'workspace_id'])] = pick(rng, NASTY_VALUES);
    } else if (keys.length) {
      const key = pick(rng, keys);
      copy[key] = mutate(copy[key], props[key], rng);
    }
    return copy;
  }
  if (Array.isArray(value)) {
    if (roll < 0.7) return Array.from({ length: 5001 }, () => value[0] ?? null);
    return value.map((v) => mutate(v, schema?.items, rng));
  }
  if (typeof value === 'number') return pick(rng, [-1, 0, 1e12, 0.5, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER]);
  return pick(rng, NASTY_STRINGS);
}

/** `{"a":{"a":…}}` nested `depth` levels, as text (JSON.stringify of such a value would recurse as deep). */
export function deeplyNested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** A JSON body nested far beyond any limit, in the place of a field of a valid body when there is one. */
export function deepBody(valid: unknown, rng: () => number): string {
  const depth = pick(rng, [100, 20_000]);
  if (!valid || typeof valid !== 'object' || Array.isArray(valid) || Object.keys(valid).length === 0) return deeplyNested(depth);
  const key = pick(rng, Object.keys(valid));
  return JSON.stringify({ ...(valid as Record<string, unknown>), [key]: '\u0000DEEP' }).replace('"\\u0000DEEP"', deeplyNested(depth));
}

/** Malformed multipart/form-data bodies: [content type, body]. */
export function malformedMultipart(rng: () => number): [string, string] {
  const part = (boundary: string) => `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n`;
  const long = 'b'.repeat(pick(rng, [257, 300, 5_000]));
  return pick(rng, [
    ['multipart/form-data', 'x'],
    ['multipart/form-data; boundary=', 'x'],
    [`multipart/form-data; boundary=${long}`, `${part(long)}x\r\n--${long}--\r\n`],
    ['multipart/form-data; boundary=zzz', `${part('zzz')}half a file`],
    ['multipart/form-data; boundary=zzz', '--zzz\r\nno headers end'],
    ['multipart/form-data; boundary=zzz', ''],
  ] as Array<[string, string]>);
}

/** A query-string or path value: any of the nasty strings, or a mutation rendered as text. */
export function textValue(schema: Schema | undefined, rng: () => number): string {
  const value = rng() < 0.3 ? validValue(schema, rng) : mutate(validValue(schema, rng), schema, rng);
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
}
