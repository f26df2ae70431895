import type { ASTNode } from '@marcbachmann/cel-js';

/**
 * Which node properties a condition reads: every member-access chain rooted at
 * `resource.properties`, in the schema's dotted form (`configuration.ipPermissions.fromPort`).
 *
 * Lists are not marked in the schema, so an element of a list has its list's path: the variable of
 * a comprehension (`exists`, `all`, `exists_one`, `filter`, `map`) or of `cel.bind` stands for the
 * path of the list or value it ranges over, and an index (`list[0]`) keeps the path. A string-literal
 * index (`m["key"]`) is a member access. Used to check that built-in rules read only declared paths
 * that exist in the AWS Config schema, and to tell inventory authors what a rule needs.
 */
export function conditionReads(ast: ASTNode): Set<string> {
  const out = new Set<string>();
  visit(ast, new Map(), out);
  return out;
}

/** What a sub-expression stands for: the `resource` variable, or a path under `resource.properties`. */
type Target = { kind: 'resource' } | { kind: 'props'; path: readonly string[] } | null;
type Scope = ReadonlyMap<string, Target>;

const COMPREHENSIONS = new Set(['exists', 'all', 'exists_one', 'filter', 'map']);

function visit(node: ASTNode, scope: Scope, out: Set<string>): Target {
  switch (node.op) {
    case 'id':
      if (scope.has(node.args)) return scope.get(node.args) ?? null;
      return node.args === 'resource' ? { kind: 'resource' } : null;
    case '.':
    case '.?':
      return member(visit(node.args[0], scope, out), node.args[1], out);
    case '[]':
    case '[?]': {
      const base = visit(node.args[0], scope, out);
      const index = node.args[1];
      visit(index, scope, out);
      if (index.op === 'value' && typeof index.args === 'string') return member(base, index.args, out);
      return base?.kind === 'props' ? base : null;
    }
    case 'rcall':
      return receiverCall(node.args[0], node.args[1], node.args[2], scope, out);
    case 'call':
      for (const arg of node.args[1]) visit(arg, scope, out);
      return null;
    case 'value':
      return null;
    case 'map':
      for (const [key, value] of node.args) {
        visit(key, scope, out);
        visit(value, scope, out);
      }
      return null;
    case 'list':
      for (const item of node.args) visit(item, scope, out);
      return null;
    case '!_':
    case '-_':
      visit(node.args, scope, out);
      return null;
    default:
      // Binary operators, `&&`, `||` and `?:` carry their operands as an array of nodes.
      for (const arg of node.args as ASTNode[]) visit(arg, scope, out);
      return null;
  }
}

function member(base: Target, field: string, out: Set<string>): Target {
  if (base === null) return null;
  if (base.kind === 'resource') return field === 'properties' ? { kind: 'props', path: [] } : null;
  const path = [...base.path, field];
  out.add(path.join('.'));
  return { kind: 'props', path };
}

function receiverCall(name: string, receiver: ASTNode, args: ASTNode[], scope: Scope, out: Set<string>): Target {
  // cel.bind(var, init, body): `var` stands for whatever `init` is.
  if (name === 'bind' && receiver.op === 'id' && receiver.args === 'cel' && args[0]?.op === 'id' && args.length === 3) {
    const init = visit(args[1]!, scope, out);
    return visit(args[2]!, new Map(scope).set(args[0].args, init), out);
  }
  const range = visit(receiver, scope, out);
  if (COMPREHENSIONS.has(name) && args[0]?.op === 'id') {
    // The variable stands for one element, which has the list's path; `map(x, filter, transform)`
    // evaluates to its last argument.
    const inner = new Map(scope).set(args[0].args, range);
    let last: Target = null;
    for (const arg of args.slice(1)) last = visit(arg, inner, out);
    if (name === 'filter') return range;
    return name === 'map' ? last : null;
  }
  for (const arg of args) visit(arg, scope, out);
  return null;
}
