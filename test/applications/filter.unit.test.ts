import { describe, expect, it } from 'vitest';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { FilterError, parseFilter, quote, tagAttribute, tokenize, type FilterNode } from '../../src/modules/applications/filter/language.js';
import { compileFilter } from '../../src/modules/applications/filter/sql.js';
import { AppError } from '../../src/platform/http/errors.js';

/** A compact rendering of the tree, to compare structure and precedence. */
function show(node: FilterNode): string {
  switch (node.kind) {
    case 'and':
      return `(${show(node.left)} AND ${show(node.right)})`;
    case 'or':
      return `(${show(node.left)} OR ${show(node.right)})`;
    case 'not':
      return `NOT ${show(node.operand)}`;
    case 'compare': {
      const a = node.attribute;
      const name = a.kind === 'tag' ? `tag[${a.key}]` : a.kind === 'property' ? `prop[${a.path.join('|')}]` : `${a.kind}:${a.name}`;
      return `${name} ${node.op} ${JSON.stringify(node.values)}`;
    }
  }
}

function errorAt(text: string): { message: string; position: number } {
  try {
    parseFilter(text);
  } catch (error) {
    if (error instanceof FilterError) return { message: error.message, position: error.position };
    throw error;
  }
  throw new Error(`"${text}" parsed`);
}

describe('filter language: valid filters', () => {
  it.each([
    ['name = web', 'column:name = ["web"]'],
    ['type = aws.ec2.instance AND tags.env = prod', '(column:type = ["aws.ec2.instance"] AND tag[env] = ["prod"])'],
    ['vpc_id = "vpc-0a1b2c"', 'mapped:vpc_id = ["vpc-0a1b2c"]'],
    ['name contains "pay"', 'column:name contains ["pay"]'],
    ['tags.app != checkout', 'tag[app] != ["checkout"]'],
    ['tags.kubernetes.io/cluster/prod = owned', 'tag[kubernetes.io/cluster/prod] = ["owned"]'],
    ['tags."aws:cloudformation:stack-name" = api', 'tag[aws:cloudformation:stack-name] = ["api"]'],
    ['tags."Cost Center" = 42', 'tag[Cost Center] = ["42"]'],
    ['properties.configuration.instanceType = t3.micro', 'prop[configuration|instanceType] = ["t3.micro"]'],
    ['properties.configuration."odd.key".x = 1', 'prop[configuration|odd.key|x] = ["1"]'],
    ['region in (us-east-1, "eu-west-1")', 'column:region in ["us-east-1","eu-west-1"]'],
    ['tags.owner exists', 'tag[owner] exists []'],
    ["name = 'it''s'", null],
    ['name = "say \\"hi\\""', 'column:name = ["say \\"hi\\""]'],
    ['NAME = a and TYPE = b Or not region = c', '((column:name = ["a"] AND column:type = ["b"]) OR NOT column:region = ["c"])'],
    ['a_b_c_is_not_an_attribute = 1', null],
  ])('%s', (text, expected) => {
    if (expected === null) {
      expect(() => parseFilter(text)).toThrow(FilterError);
      return;
    }
    expect(show(parseFilter(text))).toBe(expected);
  });

  it('binds AND tighter than OR, and parentheses override it', () => {
    expect(show(parseFilter('name = a OR name = b AND type = c'))).toBe('(column:name = ["a"] OR (column:name = ["b"] AND column:type = ["c"]))');
    expect(show(parseFilter('(name = a OR name = b) AND type = c'))).toBe('((column:name = ["a"] OR column:name = ["b"]) AND column:type = ["c"])');
    expect(show(parseFilter('NOT (name = a OR NOT name = b)'))).toBe('NOT (column:name = ["a"] OR NOT column:name = ["b"])');
  });

  it('accepts == and <> as spellings of = and !=', () => {
    expect(show(parseFilter('name == a AND type <> b'))).toBe('(column:name = ["a"] AND column:type != ["b"])');
  });

  it('round-trips quoted values and tag keys', () => {
    for (const value of ['plain', 'with space', 'quote " inside', "single ' quote", 'back\\slash', 'AND', '']) {
      const ast = parseFilter(`${tagAttribute('App Name')} = ${quote(value)}`);
      expect(ast).toMatchObject({ kind: 'compare', attribute: { kind: 'tag', key: 'App Name' }, values: [value] });
    }
    expect(tagAttribute('app')).toBe('tags.app');
    expect(tagAttribute('aws:cloudformation:stack-name')).toBe('tags.aws:cloudformation:stack-name');
    expect(tagAttribute('a b')).toBe('tags."a b"');
  });

  it('tokenizes positions exactly', () => {
    expect(tokenize('name = "x y"').map((t) => [t.kind, t.start, t.end])).toEqual([
      ['word', 0, 4],
      ['eq', 5, 6],
      ['string', 7, 12],
      ['eof', 12, 12],
    ]);
  });
});

describe('filter language: errors carry the position', () => {
  it.each([
    ['', 0, /empty/],
    ['name =', 6, /expected a value/],
    ['name = a AND', 12, /expected an attribute/],
    ['name = a AND AND type = b', 13, /expected an attribute/],
    ['colour = red', 0, /unknown attribute "colour"/],
    ['name ~ a', 5, /unexpected character|unexpected/],
    ['name = "open', 7, /unterminated string/],
    ['(name = a', 9, /expected "\)" closing the "\(" at position 0/],
    ['name = a)', 8, /expected AND, OR or the end/],
    ['name a', 5, /expected an operator/],
    ['name = and', 7, /quote it/],
    ['region in (a b)', 13, /expected "," or "\)"/],
    ['region in a', 10, /expected "\(" after IN/],
    ['name < a', 5, /unsupported operator/],
    ['name ! a', 5, /did you mean/],
    ['tags. = a', 0, /tag key/],
    ['properties. = a', 0, /property path/],
    ['name contains ""', 13, /non-empty/],
    ['name = a OR', 11, /expected an attribute/],
    ['name = "a\u0000b"', 9, /NUL character/],
  ])('%j fails at %i', (text, position, message) => {
    const error = errorAt(text);
    expect(error.position).toBe(position);
    expect(error.message).toMatch(message);
  });

  it('refuses very deep nesting and very long filters', () => {
    expect(errorAt(`${'('.repeat(100)}name = a${')'.repeat(100)}`).message).toMatch(/nests deeper/);
    expect(errorAt(`name = "${'x'.repeat(5000)}"`).message).toMatch(/longer than/);
  });

  it('compileFilter turns a syntax error into a 400 with the position in details', () => {
    try {
      compileFilter('type = aws.ec2.instance AND colour = red');
      throw new Error('compiled');
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      const e = error as AppError;
      expect(e.status).toBe(400);
      expect(e.message).toMatch(/invalid filter: unknown attribute "colour".*\(at position 28\)/);
      expect(e.details).toMatchObject({ field: 'filter', position: 28 });
    }
  });

  it('compiles user values to bind parameters, never into the SQL text', () => {
    const compiled = compileFilter(`name = "x'; DROP TABLE nodes; --" OR tags."k'); --" contains v`);
    const db = new Kysely<any>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (k) => new PostgresIntrospector(k),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    });
    const { sql, parameters } = compiled.predicate('n').compile(db);
    expect(sql).not.toMatch(/DROP TABLE/);
    expect(sql).not.toMatch(/k'\)/);
    expect(parameters).toContain("x'; DROP TABLE nodes; --");
    expect(parameters).toContain("k'); --");
  });
});
