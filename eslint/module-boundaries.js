import path from 'node:path';

/**
 * Module boundaries the linter keeps (issue 26):
 * - a file of src/modules/<a>/ imports another module only through src/modules/<b>/index.ts, which
 *   exports what other modules may use; its other files are that module's internals;
 * - src/platform/ imports no module and not src/deps.ts (modules build on the platform, not back).
 * Paths are resolved against the importing file, so `../../graph/node-repo.js` and
 * `../graph/node-repo.js` are judged alike at any depth. no-restricted-imports cannot say "a module
 * other than the importer's own", hence this small rule.
 */
const moduleOf = (file) => /(?:^|\/)src\/modules\/([^/]+)\//.exec(file)?.[1] ?? null;
const inPlatform = (file) => /(?:^|\/)src\/platform\//.test(file);

export const moduleBoundaries = {
  meta: {
    type: 'problem',
    docs: { description: "forbid importing another module's internals, and the platform importing modules or src/deps.ts" },
    schema: [],
    messages: {
      internal: 'Import the {{module}} module through its index.ts ({{suggestion}}), not its internal file: export what you need there.',
      platform: 'src/platform/ imports no module and not src/deps.ts: take what you need as a parameter (the module passes it in).',
    },
  },
  create(context) {
    const file = context.filename.split(path.sep).join('/');
    const own = moduleOf(file);
    const platform = inPlatform(file);
    if (!own && !platform) return {};
    const check = (source) => {
      if (!source || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), source.value));
      const other = moduleOf(target);
      if (platform) {
        if (other || /(?:^|\/)src\/modules\/index\.[jt]s$/.test(target) || /(?:^|\/)src\/deps\.[jt]s$/.test(target)) {
          context.report({ node: source, messageId: 'platform' });
        }
        return;
      }
      if (!other || other === own) return;
      if (/\/src\/modules\/[^/]+\/index\.[jt]s$/.test(target) || /^src\/modules\/[^/]+\/index\.[jt]s$/.test(target)) return;
      const suggestion = path.posix.relative(path.posix.dirname(file), target.replace(/(src\/modules\/[^/]+)\/.*$/, '$1/index.js'));
      context.report({ node: source, messageId: 'internal', data: { module: other, suggestion } });
    };
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source.type === 'Literal' ? node.source : null),
      TSImportType: (node) => check(node.argument?.literal ?? node.argument),
    };
  },
};

export const boundariesPlugin = { rules: { 'module-boundaries': moduleBoundaries } };
