/**
 * A rule's Terraform fix for one node, as a unified diff.
 *
 * Two strategies:
 * - 'source': the node came from Terraform and its file's text is known (`source.file`,
 *   `source.content`, see terraform-source.ts). The patch edits that file: the `set` attributes are
 *   added or replaced inside the resource block, or the `add_block` is inserted right after it (or
 *   replaces the existing block of that type for the resource). Every other byte is kept.
 * - 'generated': otherwise (no Terraform source, no file text, the block is not in the text, or the
 *   text cannot be scanned). `base` is a file `generated/<type>.<name>.tf` rendering the node as a
 *   resource block (generated-resource.ts), and the patch applies the fix to that file. A user
 *   writes `base.content` to `base.path`, then runs `git apply` (or `patch -p1`) with the patch, and
 *   gets a resource block with the fix, ready to import or to copy into their configuration.
 *
 * In an `add_block`, `${name}` becomes the resource's Terraform name and `${ref}` its local address
 * (`aws_s3_bucket.logs`, without any `module.` prefix, since the added block lives in the same module).
 * For one instance of a counted resource (`aws_s3_bucket.logs[0]`), `${ref}` is the instance
 * (`aws_s3_bucket.logs[0]`) and `${name}` gets the key (`logs_0`); a `set` then edits the block
 * shared by every instance.
 */
import type { RuleDefinition, TerraformFix } from '../rules/rule-types.js';
import { canRender, generatedTypeOf, renderGeneratedResource } from './generated-resource.js';
import { findResource, HclScanError, scanBody } from './hcl-blocks.js';
import { addBlocks, ResourceNotFoundError, setAttributes } from './hcl-edit.js';
import { instanceName, terraformIdentifier } from './terraform-address.js';
import { terraformSource, type PatchNode } from './terraform-source.js';
import { unifiedDiff } from './unified-diff.js';

export type { PatchNode, TerraformSource } from './terraform-source.js';

export interface TerraformPatch {
  /** The file the patch edits, relative to the Terraform root (`source.file`, or `base.path`). */
  path: string;
  /**
   * Unified diff of `path` (`--- a/<path>` / `+++ b/<path>`), for `git apply` or `patch -p1` run at the
   * Terraform root. Empty when the file already holds the fix: for 'source', the live resource has
   * drifted from its configuration and `terraform apply` is the remedy; for 'generated', the node
   * already complies.
   */
  patch: string;
  /** 'generated' only: the file to create before applying the patch. */
  base: { path: string; content: string } | null;
  strategy: 'source' | 'generated';
}

interface Target {
  type: string;
  /** The block's name label. */
  label: string;
  /** What `${name}` and `${ref}` stand for. */
  name: string;
  ref: string;
  source?: { file: string; content: string };
  /** The name of the generated block, when the node can be rendered. */
  generatedName?: string;
}

/**
 * The patch applying `rule`'s Terraform fix to `node`; null when the rule has no fix, the node's
 * Terraform type is not the fix's, or there is neither source text with the block nor a way to
 * render the node.
 */
export function terraformPatch(rule: RuleDefinition, node: PatchNode): TerraformPatch | null {
  const fix = rule.terraform;
  const target = fix && targetOf(fix, node);
  if (!fix || !target) return null;
  // A fix whose block text cannot be scanned is broken content, not a reason to fall back.
  const problem = terraformFixError(fix);
  if (problem) throw new InvalidTerraformFixError(rule.id, problem);
  if (target.source) {
    const { file, content } = target.source;
    const after = attempt(() => applyFix(fix, content, target.type, target.label, target.name, target.ref));
    if (after !== undefined) return { path: file, patch: unifiedDiff(file, content, after), base: null, strategy: 'source' };
  }
  if (target.generatedName === undefined) return null;
  const name = target.generatedName;
  const base = renderGeneratedResource(target.type, name, node)!;
  const path = `generated/${target.type}.${name}.tf`;
  const after = applyFix(fix, base, target.type, name, name, `${target.type}.${name}`);
  return { path, patch: unifiedDiff(path, base, after), base: { path, content: base }, strategy: 'generated' };
}

export class InvalidTerraformFixError extends Error {
  constructor(ruleId: string, problem: string) {
    super(`rule ${ruleId}: terraform fix: ${problem}`);
    this.name = 'InvalidTerraformFixError';
  }
}

/**
 * What is wrong with a fix, or undefined: an `add_block` must be one or more HCL blocks this module
 * can scan. For validating custom rules when they are saved; terraformPatch throws
 * InvalidTerraformFixError on such a fix.
 */
export function terraformFixError(fix: TerraformFix): string | undefined {
  if (fix.add_block === undefined) return undefined;
  try {
    const items = scanBody(substitute(fix.add_block, 'name', 'type.name'));
    if (items.length === 0) return 'add_block holds no block';
    const attribute = items.find((i) => i.kind === 'attribute');
    return attribute ? `add_block must hold only blocks (found the attribute "${attribute.name}")` : undefined;
  } catch (error) {
    if (error instanceof HclScanError) return `add_block is not valid HCL: ${error.message}`;
    throw error;
  }
}

/** Whether terraformPatch would return a patch (without building it). */
export function patchAvailable(rule: RuleDefinition, node: PatchNode): boolean {
  const target = rule.terraform && targetOf(rule.terraform, node);
  if (!target) return false;
  if (target.generatedName !== undefined) return true;
  if (!target.source) return false;
  const { content } = target.source;
  return attempt(() => findResource(content, target.type, target.label)) !== undefined;
}

function targetOf(fix: TerraformFix, node: PatchNode): Target | undefined {
  const source = terraformSource(node);
  if (source) {
    const { address } = source;
    if (address.type !== fix.resource) return undefined;
    const name = instanceName(address);
    return {
      type: address.type,
      label: address.name,
      name,
      ref: `${address.type}.${address.name}${address.index}`,
      ...(source.file !== undefined && source.content !== undefined ? { source: { file: source.file, content: source.content } } : {}),
      ...(canRender(address.type, node) ? { generatedName: terraformIdentifier(name) } : {}),
    };
  }
  const type = generatedTypeOf(node);
  if (type !== fix.resource) return undefined;
  const name = terraformIdentifier(node.name || node.native_id);
  return { type, label: name, name, ref: `${type}.${name}`, generatedName: name };
}

function applyFix(fix: TerraformFix, text: string, type: string, label: string, name: string, ref: string): string {
  if (fix.set !== undefined) return setAttributes(text, type, label, fix.set);
  return addBlocks(text, type, label, substitute(fix.add_block ?? '', name, ref), ref);
}

const substitute = (block: string, name: string, ref: string): string => block.split('${name}').join(name).split('${ref}').join(ref);

/** The result, or undefined when the text cannot be scanned or lacks the block (the cases that fall back). */
function attempt<T>(run: () => T): T | undefined {
  try {
    return run();
  } catch (error) {
    if (error instanceof HclScanError || error instanceof ResourceNotFoundError) return undefined;
    throw error;
  }
}
