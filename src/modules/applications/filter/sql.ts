import { sql, type RawBuilder } from 'kysely';
import type { Attribute } from './attributes.js';
import { FilterError } from './errors.js';
import { parseFilter, type FilterNode } from './language.js';
import { badRequest } from '../../../platform/http/errors.js';

/**
 * Compiles a parsed filter to a predicate over `nodes AS <alias>`. Every user value, tag key and
 * property path is a bind parameter; only column names from a fixed list are written into the SQL.
 * Each comparison is two-valued (never NULL): a missing attribute is unequal to every value, so
 * `NOT` and `!=` match resources that lack the attribute.
 */
export function attributeSql(attribute: Attribute, alias: string): RawBuilder<string | null> {
  const properties = sql.ref(`${alias}.properties`);
  switch (attribute.kind) {
    case 'column':
      return sql<string>`${sql.ref(`${alias}.${attribute.column}`)}`;
    case 'tag':
      return sql<string | null>`(${sql.ref(`${alias}.tags`)} ->> ${attribute.key}::text)`;
    case 'property':
      return sql<string | null>`(${properties} #>> ${attribute.path}::text[])`;
    case 'mapped': {
      const sources = attribute.mapping.sources.map((source) =>
        'path' in source
          ? sql`(${properties} #>> ${source.path}::text[])`
          : sql`(SELECT r ->> 'resourceId' FROM jsonb_array_elements(CASE WHEN jsonb_typeof(${properties} -> 'relationships') = 'array' THEN ${properties} -> 'relationships' ELSE '[]'::jsonb END) r WHERE r ->> 'resourceType' = ${source.relationship}::text LIMIT 1)`,
      );
      return sql<string | null>`COALESCE(${sql.join(sources)})`;
    }
  }
}

export function compileNode(node: FilterNode, alias: string): RawBuilder<boolean> {
  switch (node.kind) {
    case 'and':
      return sql<boolean>`(${compileNode(node.left, alias)} AND ${compileNode(node.right, alias)})`;
    case 'or':
      return sql<boolean>`(${compileNode(node.left, alias)} OR ${compileNode(node.right, alias)})`;
    case 'not':
      return sql<boolean>`(NOT ${compileNode(node.operand, alias)})`;
    case 'compare': {
      const value = attributeSql(node.attribute, alias);
      switch (node.op) {
        case '=':
          return sql<boolean>`COALESCE(${value} = ${node.values[0]!}::text, false)`;
        case '!=':
          return sql<boolean>`(${value} IS DISTINCT FROM ${node.values[0]!}::text)`;
        case 'contains':
          return sql<boolean>`COALESCE(strpos(lower(${value}), lower(${node.values[0]!}::text)) > 0, false)`;
        case 'in':
          return sql<boolean>`COALESCE(${value} = ANY(${node.values}::text[]), false)`;
        case 'exists':
          return sql<boolean>`(${value} IS NOT NULL)`;
      }
    }
  }
}

/** A filter checked and compiled; `predicate(alias)` is its SQL over `nodes AS alias`. */
export interface CompiledFilter {
  text: string;
  ast: FilterNode;
  predicate(alias?: string): RawBuilder<boolean>;
}

export function compileFilter(text: string, field = 'filter'): CompiledFilter {
  let ast: FilterNode;
  try {
    ast = parseFilter(text);
  } catch (error) {
    if (error instanceof FilterError) {
      const from = Math.max(0, error.position - 20);
      throw badRequest(`invalid ${field}: ${error.message} (at position ${error.position})`, {
        field,
        position: error.position,
        near: text.slice(from, error.position + 20),
      });
    }
    throw error;
  }
  return { text, ast, predicate: (alias = 'n') => compileNode(ast, alias) };
}

/** Like compileFilter, for filters stored earlier (already valid): never a client error. */
export function storedFilter(text: string): CompiledFilter {
  const ast = parseFilter(text);
  return { text, ast, predicate: (alias = 'n') => compileNode(ast, alias) };
}

/** OR of several filters (a business service is the union of its applications). */
export function anyOf(filters: CompiledFilter[], alias = 'n'): RawBuilder<boolean> {
  if (filters.length === 0) return sql<boolean>`false`;
  return sql<boolean>`(${sql.join(
    filters.map((f) => f.predicate(alias)),
    sql` OR `,
  )})`;
}
