import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../../platform/paths.js';
import { findResource, HclScanError, resourceBlocks, scanBody, type HclItem } from './hcl-blocks.js';

const fixture = (name: string) => readFileSync(projectPath('test', 'fixtures', 'terraform', name), 'utf8');
const text = (source: string, item: HclItem) => source.slice(item.start, item.end);
const names = (item: HclItem) => item.items.map((i) => `${i.kind === 'block' ? '{}' : '='}${i.name}`);

describe('scanBody', () => {
  it('returns nothing for an empty or blank file', () => {
    expect(scanBody('')).toEqual([]);
    expect(scanBody('\n\n  # only a comment\n/* and another */\n')).toEqual([]);
    expect(scanBody('\uFEFF')).toEqual([]);
  });

  it('finds top-level blocks and attributes with exact offsets', () => {
    const src = 'a = 1\nresource "t" "n" {\n  x = [1,\n    2]\n  nested "l" {\n    y = "}"\n  }\n}\nb = 2';
    const [a, r, b] = scanBody(src);
    expect(text(src, a!)).toBe('a = 1');
    expect(a!.lineEnd).toBe(6);
    expect(r!.labels).toEqual(['t', 'n']);
    expect(text(src, r!)).toMatch(/^resource "t" "n" \{[\s\S]*\n\}$/);
    expect(src[r!.open]).toBe('{');
    expect(src[r!.close]).toBe('}');
    expect(names(r!)).toEqual(['=x', '{}nested']);
    expect(text(src, r!.items[0]!)).toBe('x = [1,\n    2]');
    expect(r!.items[1]!.items.map((i) => text(src, i))).toEqual(['y = "}"']);
    expect(text(src, b!)).toBe('b = 2');
    expect(b!.lineEnd).toBe(src.length);
  });

  it('reads labels written as identifiers and as strings with escapes', () => {
    const [block] = scanBody('resource aws_s3_bucket "we\\"ird" {}\n');
    expect(block!.labels).toEqual(['aws_s3_bucket', 'we"ird']);
    expect(block!.labelSpans).toEqual([
      [9, 22],
      [23, 32],
    ]);
  });

  it('ends an attribute before a trailing comment, keeps single-line blocks whole', () => {
    const src = 'resource "t" "n" {\n  a = true # set by hand }\n  v { status = "Enabled" }\n  c = 1 // why\n  d = 2 /* inline */\n}\n';
    const r = findResource(src, 't', 'n')!;
    expect(r.items.map((i) => text(src, i))).toEqual(['a = true', 'v { status = "Enabled" }', 'c = 1', 'd = 2']);
    expect(r.items[1]!.items.map((i) => text(src, i))).toEqual(['status = "Enabled"']);
  });

  it('handles a one-line resource block', () => {
    const src = 'resource "t" "a" {}\nresource "t" "b" { x = 1 }';
    expect(resourceBlocks(src).map((b) => [b.labels[1], names(b)])).toEqual([
      ['a', []],
      ['b', ['=x']],
    ]);
  });

  it('skips strings with escapes and nested interpolation', () => {
    const src = [
      'resource "t" "n" {',
      '  a = "quote \\" brace } \\\\"',
      '  b = "${lookup(var.m, "k}", "{")}-${var.x}"',
      '  c = "$${not.interpolated} %%{ not a directive"',
      '  d = "%{ if var.on }on%{ else }}off%{ endif }"',
      '  e = "${ { a = "}" }.a }"',
      '}',
      '',
    ].join('\n');
    expect(names(findResource(src, 't', 'n')!)).toEqual(['=a', '=b', '=c', '=d', '=e']);
  });

  it('skips heredocs, indented closing markers, <<- and look-alike lines', () => {
    const src = [
      'resource "t" "n" {',
      '  a = <<EOT',
      'resource "t" "n" {',
      '  EOTX',
      '   EOT is not alone here',
      '  EOT',
      '  b = <<-JSON',
      '    { "x": "${jsonencode({ k = "}" })}", "y": "$${z}" }',
      '    back\\',
      '    JSON',
      '  c = [<<A',
      '}',
      'A',
      '  , "y"]',
      '  d = 1',
      '}',
      '',
    ].join('\n');
    const r = findResource(src, 't', 'n')!;
    expect(names(r)).toEqual(['=a', '=b', '=c', '=d']);
    expect(text(src, r.items[0]!)).toMatch(/^a = <<EOT\n[\s\S]*\n {2}EOT$/);
  });

  it('does not end a heredoc on a marker inside a template sequence', () => {
    const src = 'resource "t" "n" {\n  a = <<EOT\n${join(",", [\nEOT\n])}\nEOT\n  b = 2\n}\n';
    // Contrived, but it shows the marker is only looked for in literal text.
    expect(names(findResource(src, 't', 'n')!)).toEqual(['=a', '=b']);
  });

  it('treats comments holding braces and block syntax as comments', () => {
    const src = '# resource "t" "n" {\n// }\n/* resource "t" "n" {\n} */\nresource "t" "n" {\n  # }\n  a = 1\n}\n';
    const blocks = resourceBlocks(src);
    expect(blocks).toHaveLength(1);
    expect(src.slice(blocks[0]!.lineStart, blocks[0]!.lineStart + 8)).toBe('resource');
    expect(names(blocks[0]!)).toEqual(['=a']);
  });

  it('handles CRLF line breaks and a missing final line break', () => {
    const lf = fixture('s3.tf');
    const crlf = lf.replace(/\n/g, '\r\n');
    const a = findResource(lf, 'aws_s3_bucket', 'payments')!;
    const b = findResource(crlf, 'aws_s3_bucket', 'payments')!;
    expect(names(b)).toEqual(names(a));
    expect(crlf.slice(b.start, b.end).replace(/\r\n/g, '\n')).toBe(lf.slice(a.start, a.end));
    expect(crlf.slice(b.lineEnd - 2, b.lineEnd)).toBe('\r\n');
    const cut = lf.slice(0, lf.lastIndexOf('}') + 1);
    const last = resourceBlocks(cut).at(-1)!;
    expect(last.labels).toEqual(['aws_s3_object', 'readme']);
    expect(last.lineEnd).toBe(cut.length);
  });

  it('finds the real block among decoys in comments, strings and heredocs', () => {
    const src = fixture('s3.tf');
    const blocks = resourceBlocks(src).map((b) => b.labels.join('.'));
    expect(blocks).toEqual(['aws_s3_bucket.logs', 'aws_s3_bucket_versioning.logs', 'aws_s3_bucket.payments', 'aws_s3_bucket_policy.payments', 'aws_s3_object.readme']);
    const payments = findResource(src, 'aws_s3_bucket', 'payments')!;
    expect(names(payments)).toEqual(['=bucket', '=force_destroy', '=tags', '{}lifecycle']);
    expect(src.slice(payments.lineStart).startsWith('resource "aws_s3_bucket" "payments" {\n')).toBe(true);
  });

  it('scans every fixture file', () => {
    for (const name of ['s3.tf', 'cloudtrail.tf', 'ebs.tf', 'default-sg.tf', 'instance.tf', 'lb-listener.tf', 'kms.tf', 'rds.tf', 'account.tf', 'network.tf']) {
      expect(() => scanBody(fixture(name)), name).not.toThrow();
    }
  });

  it('rejects text it cannot follow instead of guessing', () => {
    for (const bad of [
      'resource "t" "n" {\n  a = "open\n}\n',
      'resource "t" "n" {\n  a = 1\n',
      'resource "t" "n" {\n  a = <<EOT\nnever closed\n}\n',
      'a = 1\n}\n',
      '/* open',
      'resource "t" "n" {\n  a = [1, 2\n}\n',
      '"x" = 1\n',
      'resource "t" "n"\n{\n}\n',
    ]) {
      expect(() => scanBody(bad), JSON.stringify(bad)).toThrow(HclScanError);
    }
  });

  it('returns undefined for a resource that is not there', () => {
    const src = fixture('s3.tf');
    expect(findResource(src, 'aws_s3_bucket', 'missing')).toBeUndefined();
    expect(findResource(src, 'aws_s3_bucket_policy', 'logs')).toBeUndefined();
    expect(findResource('', 'aws_s3_bucket', 'payments')).toBeUndefined();
  });
});
