/**
 * Terraform resource addresses (`aws_s3_bucket.logs`, `module.storage.aws_s3_bucket.logs`,
 * `module.app["eu"].aws_s3_bucket.logs[0]`) and the identifiers derived from them.
 */

export interface ResourceAddress {
  /** Resource type, `aws_s3_bucket`. */
  type: string;
  /** Resource name, the block's second label: `logs`. */
  name: string;
  /** The instance key as written, `[0]` or `["eu"]`, or '' for a resource without count/for_each. */
  index: string;
  /** Module path as written, `module.storage.` (empty for the root module). */
  module: string;
}

const IDENT = '[A-Za-z_][A-Za-z0-9_-]*';
// An instance key: a number or a quoted string with backslash escapes.
const KEY = '\\[(?:[0-9]+|"(?:[^"\\\\]|\\\\.)*")\\]';
const ADDRESS = new RegExp(`^((?:module\\.${IDENT}(?:${KEY})?\\.)*)(${IDENT})\\.(${IDENT})(${KEY})?$`);

/** The parts of a managed resource's address, or undefined (data sources and malformed addresses included). */
export function parseResourceAddress(address: string): ResourceAddress | undefined {
  const m = ADDRESS.exec(address.trim());
  if (!m || m[2] === 'data' || m[2] === 'module') return undefined;
  return { module: m[1]!, type: m[2]!, name: m[3]!, index: m[4] ?? '' };
}

/**
 * A valid Terraform identifier made from free text (`acme-payments-data` → `acme_payments_data`):
 * lower case, runs of other characters collapsed to `_`, and a leading `r_` when it would not start
 * with a letter. Dashes are legal in identifiers but unconventional, so they become `_` too.
 */
export function terraformIdentifier(text: string): string {
  const id = text
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (id === '') return 'r_unnamed';
  return /^[a-z]/.test(id) ? id : `r_${id}`;
}

/**
 * The name `${name}` stands for: the block's own name, or, for one instance of a counted resource,
 * the name and key (`logs[0]` → `logs_0`), so blocks added for different instances do not collide.
 */
export function instanceName(address: ResourceAddress): string {
  if (address.index === '') return address.name;
  const key = address.index.slice(1, -1).replace(/^"|"$/g, '');
  return terraformIdentifier(`${address.name}_${key}`);
}
