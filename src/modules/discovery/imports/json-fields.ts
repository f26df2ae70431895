import { JsonSyntaxError } from '../../../platform/json/json-items.js';
import { MalformedImportError } from './import-record.js';

/**
 * Reading fields of an untrusted scanner record: every value may be missing or of the wrong type,
 * and a wrong type must read as "absent", never throw (a broken record becomes a RecordError, the
 * rest of the file goes on).
 */

export type Obj = Record<string, unknown>;

export const isObject = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);

export const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The value at a key path, or undefined as soon as a step is not an object. */
export const at = (value: unknown, ...path: string[]): unknown => path.reduce<unknown>((v, key) => (isObject(v) ? v[key] : undefined), value);

export const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** What a bad record is, in words for the error list ("a string", "an array", "null"). */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** The stream's JSON errors as the contract's MalformedImportError (400), keeping the byte offset. */
export function rethrowMalformed(error: unknown, what: string): never {
  if (error instanceof JsonSyntaxError) throw new MalformedImportError(`not a valid ${what} file: ${error.message}`, error.offset);
  throw error;
}
