/**
 * The node a patch is made for, and where it came from when it came from Terraform.
 *
 * `node.source` for a Terraform node:
 *   { kind: 'terraform',
 *     address: 'aws_s3_bucket.logs',      // resource address; module-qualified and instance keys allowed:
 *                                         // 'module.storage.aws_s3_bucket.logs', 'aws_s3_bucket.logs[0]'
 *     file: 'main.tf',                    // the .tf file holding the block, relative to the Terraform root
 *     content?: '<full text of that file>' }
 * For a module-qualified address, `file` is the module's file (e.g. 'modules/storage/main.tf'), which
 * declares the block under its local name: the last `<type>.<name>` of the address.
 */
import { parseResourceAddress, type ResourceAddress } from './terraform-address.js';

export interface TerraformSource {
  kind: 'terraform';
  address: string;
  file: string;
  content?: string;
}

/** What a patch needs of a graph node. A stored node (NodeRecord) is one. */
export interface PatchNode {
  id: string;
  type: string;
  name: string;
  native_id: string;
  region: string;
  account_id: string | null;
  properties: Record<string, unknown>;
  tags: Record<string, unknown>;
  /** Free-form for other kinds (`aws-config`, `agent`); read as a TerraformSource when kind is `terraform`. */
  source?: { kind: string; address?: string; file?: string; content?: string } | null;
}

export interface ResolvedSource {
  address: ResourceAddress;
  /** Normalised: forward slashes, no leading `./`. */
  file: string | undefined;
  content: string | undefined;
}

/**
 * The node's Terraform origin, or undefined when it has none or its address is not a managed
 * resource's. `file` is dropped unless it is a plain relative path: it becomes the path in the patch,
 * and a patch must not point outside the Terraform root.
 */
export function terraformSource(node: PatchNode): ResolvedSource | undefined {
  const source = node.source;
  if (!source || source.kind !== 'terraform' || typeof source.address !== 'string') return undefined;
  const address = parseResourceAddress(source.address);
  if (!address) return undefined;
  const file = typeof source.file === 'string' ? safeRelativePath(source.file) : undefined;
  const content = typeof source.content === 'string' ? source.content : undefined;
  return { address, file, content };
}

export function safeRelativePath(path: string): string | undefined {
  const normal = path.replace(/\\/g, '/').replace(/^(?:\.\/)+/, '');
  const parts = normal.split('/');
  if (normal === '' || normal.startsWith('/') || /^[A-Za-z]:/.test(normal)) return undefined;
  if (parts.some((p) => p === '' || p === '.' || p === '..')) return undefined;
  return normal;
}
