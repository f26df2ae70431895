import { describe, expect, it } from 'vitest';
import { hasTerraform, terraformFmt } from '../../../../test/fixtures/terraform/harness.js';
import { hclKey, hclString, renderBlock, renderValue } from './hcl-values.js';

describe('hclString', () => {
  it('escapes quotes, backslashes, line breaks, control characters and template openers', () => {
    expect(hclString('plain')).toBe('"plain"');
    expect(hclString('say "hi" \\ bye')).toBe('"say \\"hi\\" \\\\ bye"');
    expect(hclString('a\nb\r\tc\u0001')).toBe('"a\\nb\\r\\tc\\u0001"');
    expect(hclString('${var.x} %{ if } $x %x {}')).toBe('"$${var.x} %%{ if } $x %x {}"');
    expect(hclString('é ✓')).toBe('"é ✓"');
  });
});

describe('hclKey', () => {
  it('leaves identifiers bare and quotes the rest', () => {
    expect(hclKey('Name')).toBe('Name');
    expect(hclKey('cost-center')).toBe('cost-center');
    expect(hclKey('aws:cloudformation:stack-name')).toBe('"aws:cloudformation:stack-name"');
    expect(hclKey('1st')).toBe('"1st"');
    expect(hclKey('true')).toBe('"true"');
  });
});

describe('renderValue', () => {
  it('renders scalars', () => {
    expect(renderValue(true)).toBe('true');
    expect(renderValue(false)).toBe('false');
    expect(renderValue(7)).toBe('7');
    expect(renderValue(0.5)).toBe('0.5');
    expect(renderValue(null)).toBe('null');
    expect(renderValue('ELBSecurityPolicy-TLS13-1-2-2021-06')).toBe('"ELBSecurityPolicy-TLS13-1-2-2021-06"');
    expect(() => renderValue(Number.NaN)).toThrow();
  });

  it('keeps lists of scalars on one line and nests the rest', () => {
    expect(renderValue([])).toBe('[]');
    expect(renderValue(['a', 1, true])).toBe('["a", 1, true]');
    expect(renderValue([{ a: 1 }], '  ')).toBe('[\n    {\n      a = 1\n    },\n  ]');
  });

  it('aligns map keys like terraform fmt', () => {
    expect(renderValue({ Name: 'x', 'aws:x': 'y', Environment: 'prod' })).toBe('{\n  Name        = "x"\n  "aws:x"     = "y"\n  Environment = "prod"\n}');
    expect(renderValue({}, '', '\r\n')).toBe('{}');
    expect(renderValue({ a: { b: 1 } }, '', '\r\n')).toBe('{\r\n  a = {\r\n    b = 1\r\n  }\r\n}');
  });
});

describe('renderBlock', () => {
  const block = renderBlock(
    'resource',
    ['aws_security_group', 'web'],
    [
      { attr: 'name', value: 'web' },
      { attr: 'description', value: 'Web ${tier}' },
      {
        block: 'ingress',
        body: [
          { attr: 'from_port', value: 443 },
          { attr: 'cidr_blocks', value: ['0.0.0.0/0'] },
        ],
      },
      { block: 'egress', body: [] },
      { attr: 'tags', value: { Name: 'web', 'team:owner': 'platform' } },
      { attr: 'vpc_id', value: 'vpc-1' },
    ],
  );

  it('renders attributes and nested blocks', () => {
    expect(block).toBe(
      [
        'resource "aws_security_group" "web" {',
        '  name        = "web"',
        '  description = "Web $${tier}"',
        '  ingress {',
        '    from_port   = 443',
        '    cidr_blocks = ["0.0.0.0/0"]',
        '  }',
        '  egress {}',
        '  tags = {',
        '    Name         = "web"',
        '    "team:owner" = "platform"',
        '  }',
        '  vpc_id = "vpc-1"',
        '}',
        '',
      ].join('\n'),
    );
  });

  it.skipIf(!hasTerraform())('is already in terraform fmt layout', () => {
    expect(terraformFmt(block)).toBe(block);
  });
});
