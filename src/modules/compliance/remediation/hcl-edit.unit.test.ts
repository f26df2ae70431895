import { describe, expect, it } from 'vitest';
import { terraformFixture } from '../../../../test/fixtures/terraform/harness.js';
import { addBlocks, eolAt, ResourceNotFoundError, setAttributes } from './hcl-edit.js';

const VERSIONING = 'resource "aws_s3_bucket_versioning" "b" {\n  bucket = aws_s3_bucket.b.id\n  versioning_configuration {\n    status = "Enabled"\n  }\n}\n';

describe('setAttributes', () => {
  it('replaces only the value of an attribute, keeping its alignment and trailing comment', () => {
    const src = 'resource "t" "n" {\n  enabled   = false # why\n  name      = "x"\n}\n';
    expect(setAttributes(src, 't', 'n', { enabled: true })).toBe('resource "t" "n" {\n  enabled   = true # why\n  name      = "x"\n}\n');
  });

  it('aligns an added attribute with the run above it when it fits', () => {
    const src = 'resource "t" "n" {\n  identifier = "x"\n  multi_az   = false\n}\n';
    expect(setAttributes(src, 't', 'n', { port: 1 })).toBe('resource "t" "n" {\n  identifier = "x"\n  multi_az   = false\n  port       = 1\n}\n');
    expect(setAttributes(src, 't', 'n', { deletion_protection: true })).toBe('resource "t" "n" {\n  identifier = "x"\n  multi_az   = false\n  deletion_protection = true\n}\n');
    const afterBlock = 'resource "t" "n" {\n  a = 1\n\n  tags = {\n    x = 1\n  }\n}\n';
    expect(setAttributes(afterBlock, 't', 'n', { b: 2 })).toBe('resource "t" "n" {\n  a = 1\n\n  tags = {\n    x = 1\n  }\n  b = 2\n}\n');
  });

  it('replaces a multi-line value (list, map, heredoc) as a whole', () => {
    const src = [
      'resource "t" "n" {',
      '  exports = [',
      '    "a", # first',
      '    "b",',
      '  ]',
      '  policy = <<EOT',
      '{ "x": 1 }',
      'EOT',
      '  meta = {',
      '    a = "}"',
      '  }',
      '}',
      '',
    ].join('\n');
    const out = setAttributes(src, 't', 'n', { exports: [], policy: 'none', meta: false });
    expect(out).toBe('resource "t" "n" {\n  exports = []\n  policy = "none"\n  meta = false\n}\n');
  });

  it('inserts missing attributes before the closing brace with the body indentation', () => {
    const src = 'resource "t" "n" {\n    a = 1\n\n    inner {\n      b = 2\n    }\n}\nresource "t" "m" {}\n';
    expect(setAttributes(src, 't', 'n', { c: true, d: 'x' })).toBe(
      'resource "t" "n" {\n    a = 1\n\n    inner {\n      b = 2\n    }\n    c = true\n    d = "x"\n}\nresource "t" "m" {}\n',
    );
  });

  it('opens up one-line blocks', () => {
    expect(setAttributes('resource "t" "n" {}', 't', 'n', { a: true })).toBe('resource "t" "n" {\n  a = true\n}');
    expect(setAttributes('resource "t" "n" { a = 1 }\n', 't', 'n', { b: 2 })).toBe('resource "t" "n" {\n  a = 1\n  b = 2\n}\n');
    expect(setAttributes('resource "t" "n" { a = 1 }\n', 't', 'n', { a: 2 })).toBe('resource "t" "n" { a = 2 }\n');
    expect(setAttributes('\tresource "t" "n" {}\n', 't', 'n', { a: 1 })).toBe('\tresource "t" "n" {\n\t\ta = 1\n\t}\n');
  });

  it('replaces nested blocks of the same name by the attribute, with the comments directly above them', () => {
    const src = terraformFixture('default-sg.tf');
    const out = setAttributes(src, 'aws_default_security_group', 'default', { ingress: [], egress: [] });
    expect(out).toContain('resource "aws_default_security_group" "default" {\n  vpc_id = aws_vpc.main.id\n\n  ingress = []\n\n  egress = []\n\n  tags = {');
    expect(out).not.toContain('Members of the group');
    // The other group's ingress block is not touched.
    expect(out).toContain('resource "aws_security_group" "web" {\n  name   = "web-tier"\n  vpc_id = aws_vpc.main.id\n\n  ingress {\n');
  });

  it('removes further blocks of the same name without leaving a double blank line', () => {
    const src = 'resource "t" "n" {\n  a = 1\n\n  ingress {\n    x = 1\n  }\n\n  # second\n  ingress {\n    x = 2\n  }\n\n  b = 2\n}\n';
    expect(setAttributes(src, 't', 'n', { ingress: [] })).toBe('resource "t" "n" {\n  a = 1\n\n  ingress = []\n\n  b = 2\n}\n');
    const withAttribute = 'resource "t" "n" {\n  ingress = [1]\n  ingress {\n  }\n}\n';
    expect(setAttributes(withAttribute, 't', 'n', { ingress: [] })).toBe('resource "t" "n" {\n  ingress = []\n}\n');
  });

  it('keeps CRLF line breaks and a missing final line break', () => {
    const src = 'resource "t" "n" {\r\n  a = 1\r\n}';
    expect(setAttributes(src, 't', 'n', { b: true })).toBe('resource "t" "n" {\r\n  a = 1\r\n  b = true\r\n}');
  });

  it('throws ResourceNotFoundError when the block is missing', () => {
    expect(() => setAttributes('', 't', 'n', { a: 1 })).toThrow(ResourceNotFoundError);
  });
});

describe('addBlocks', () => {
  it('inserts after the resource, separated by a blank line, keeping the next block apart', () => {
    const src = 'resource "aws_s3_bucket" "b" {\n  bucket = "x"\n}\nresource "other" "o" {}\n';
    expect(addBlocks(src, 'aws_s3_bucket', 'b', VERSIONING, 'aws_s3_bucket.b')).toBe(
      `resource "aws_s3_bucket" "b" {\n  bucket = "x"\n}\n\n${VERSIONING}\nresource "other" "o" {}\n`,
    );
  });

  it('appends at the end of a file with or without a final line break', () => {
    const src = 'resource "aws_s3_bucket" "b" {\n  bucket = "x"\n}';
    expect(addBlocks(src, 'aws_s3_bucket', 'b', VERSIONING, 'aws_s3_bucket.b')).toBe(`${src}\n\n${VERSIONING.slice(0, -1)}`);
    expect(addBlocks(src + '\n', 'aws_s3_bucket', 'b', VERSIONING, 'aws_s3_bucket.b')).toBe(`${src}\n\n${VERSIONING}`);
    expect(addBlocks(src + ' # end\n', 'aws_s3_bucket', 'b', VERSIONING, 'aws_s3_bucket.b')).toBe(`${src} # end\n\n${VERSIONING}`);
  });

  it('writes the block with the line breaks of the file', () => {
    const src = 'resource "aws_s3_bucket" "b" {\r\n}\r\n';
    expect(addBlocks(src, 'aws_s3_bucket', 'b', VERSIONING, 'aws_s3_bucket.b')).toBe(`${src}\r\n${VERSIONING.replace(/\n/g, '\r\n')}`);
  });

  it('replaces an existing block of that type for the resource instead of duplicating it', () => {
    const existing = 'resource "aws_s3_bucket_versioning" "keep_me" {\n  bucket = aws_s3_bucket.b.bucket\n  versioning_configuration { status = "Suspended" }\n}\n';
    const other = 'resource "aws_s3_bucket_versioning" "c" {\n  bucket = aws_s3_bucket.b_2.id\n}\n';
    const src = `resource "aws_s3_bucket" "b" {}\n\n# versioning\n${existing}\n${other}`;
    const out = addBlocks(src, 'aws_s3_bucket', 'b', VERSIONING, 'aws_s3_bucket.b');
    expect(out).toBe(`resource "aws_s3_bucket" "b" {}\n\n# versioning\n${VERSIONING.replace('"b" {', '"keep_me" {')}\n${other}`);
    const same = `resource "aws_s3_bucket" "b" {}\nresource "aws_s3_bucket_versioning" "b" {\n  bucket = "literal"\n}`;
    expect(addBlocks(same, 'aws_s3_bucket', 'b', VERSIONING, 'aws_s3_bucket.b')).toBe(`resource "aws_s3_bucket" "b" {}\n${VERSIONING.slice(0, -1)}`);
  });

  it('inserts several blocks in order', () => {
    const two = 'resource "a" "x" {}\n\nresource "b" "x" {}\n';
    expect(addBlocks('resource "t" "x" {}\n', 't', 'x', two, 't.x')).toBe('resource "t" "x" {}\n\nresource "a" "x" {}\n\nresource "b" "x" {}\n');
  });

  it('throws ResourceNotFoundError when the block is missing', () => {
    expect(() => addBlocks('resource "t" "y" {}\n', 't', 'x', VERSIONING, 't.x')).toThrow(ResourceNotFoundError);
  });
});

describe('eolAt', () => {
  it('reads the line break of the line, else of the file', () => {
    expect(eolAt('a\r\nb\n', 0)).toBe('\r\n');
    expect(eolAt('a\r\nb\n', 3)).toBe('\n');
    expect(eolAt('a\r\nb', 3)).toBe('\r\n');
    expect(eolAt('b', 0)).toBe('\n');
  });
});
