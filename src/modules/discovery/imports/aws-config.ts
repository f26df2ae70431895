import type { Readable } from 'node:stream';
import { JsonSyntaxError, jsonItems } from '../../../platform/json/json-items.js';
import { captureTime, configItemNode, ItemError } from './aws-config-item.js';
import { MalformedImportError, type ImportItem, type ImportParser } from './import-record.js';

/**
 * AWS Config as an import (issue 27): configuration items become graph nodes and their relationships
 * edges, so our rules evaluate resources the aws plugin does not read. Accepted documents, each also
 * as the `data` of a recorded API call (`{"status_code": 200, "data": …}`), since users upload
 * recordings as often as the response itself:
 *
 * - a configuration snapshot or history file delivered to S3 (`{"fileVersion", "configSnapshotId", "configurationItems": […]}`);
 * - `get-resource-config-history` and `batch-get-resource-config` output (`configurationItems`, `baseConfigurationItems`);
 * - `select-resource-config` output (`{"Results": ["<JSON text>", …]}`);
 * - one configuration item, or a bare array of them.
 */

type Obj = Record<string, unknown>;

const LISTS = ['configurationItems', 'baseConfigurationItems', 'Results'];
const ITEMS_AT = [...LISTS.map((k) => [k]), ...LISTS.map((k) => ['data', k]), ['data']];

const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A configuration item's own shape: what no other format's record has. */
function looksLikeItem(value: unknown): boolean {
  return isObject(value) && (value.configurationItemCaptureTime !== undefined || (typeof value.resourceType === 'string' && value.resourceType.startsWith('AWS::')));
}

/** The document held its records in one of the lists (maybe empty): the header keeps the list's brackets. */
function hasList(header: Obj): boolean {
  const inner = isObject(header.data) ? header.data : {};
  return Array.isArray(header.data) || LISTS.some((k) => Array.isArray(header[k]) || Array.isArray(inner[k]));
}

/** A select-resource-config result is JSON text; a record that is text must hold an object. */
function decode(record: unknown): unknown {
  if (typeof record !== 'string') return record;
  try {
    return JSON.parse(record);
  } catch (error) {
    throw new ItemError(`a string that is not JSON (${(error as Error).message}); a select-resource-config result is a JSON object as text`);
  }
}

const HEAD_PATTERNS = [
  /"(configurationItems|baseConfigurationItems|configSnapshotId)"\s*:/,
  /"configurationItemCaptureTime"\s*:/,
  /"resourceType"\s*:\s*"AWS::/,
  // Trivy's output has "Results" too, as objects; select-resource-config's results are strings.
  /"Results"\s*:\s*\[\s*("|\])/,
];

/**
 * Of several items of one resource (a history page lists the newest first) only the newest is
 * kept: an older one after a newer one is skipped; a newer one after an older one is yielded again
 * and, applied later, wins.
 */
class NewestOnly {
  private readonly seen = new Map<string, string>();
  keep(id: string, captured: string): boolean {
    const prior = this.seen.get(id);
    if (prior !== undefined && captured !== '' && prior !== '' && captured < prior) return false;
    this.seen.set(id, captured);
    return true;
  }
}

function toItem(record: unknown, index: number, newest: NewestOnly): ImportItem | null {
  try {
    const decoded = decode(record);
    const node = configItemNode(decoded);
    return newest.keep(node.node.id, captureTime(decoded)) ? node : null;
  } catch (error) {
    if (error instanceof ItemError) return { kind: 'error', record: index, message: error.message };
    throw error;
  }
}

async function* parse(input: Readable): AsyncIterable<ImportItem> {
  const extractor = jsonItems(input, ITEMS_AT);
  const newest = new NewestOnly();
  let index = 0;
  try {
    for await (const record of extractor) {
      const item = toItem(record, index++, newest);
      if (item) yield item;
    }
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw new MalformedImportError(`not a valid AWS Config document: ${error.message}`, error.offset);
    throw error;
  }
  if (extractor.topLevel !== 'object' || index > 0 || hasList(extractor.header)) return;
  // No list of items: the document is one configuration item, or a recorded call returning one.
  const header: Obj = extractor.header;
  const single = looksLikeItem(header) ? header : looksLikeItem(header.data) ? (header.data as Obj) : null;
  if (!single) {
    throw new MalformedImportError(
      'not an AWS Config document: no configurationItems, baseConfigurationItems or Results list, and not a configuration item (resourceType "AWS::…", configurationItemCaptureTime)',
      0,
    );
  }
  const item = toItem(single, 0, newest);
  if (item) yield item;
}

export const awsConfigParser: ImportParser = {
  format: 'aws-config',
  detect: (head) => HEAD_PATTERNS.some((p) => p.test(head)),
  parse,
};
