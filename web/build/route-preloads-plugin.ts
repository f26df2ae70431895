import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Plugin } from 'vite';

/** What the service reads from dist/route-preloads.json: per path, the chunks its page needs beyond the shell. */
export interface RoutePreloads {
  [path: string]: { js: string[]; css: string[] };
}

interface ChunkInfo {
  type: 'chunk';
  fileName: string;
  isEntry: boolean;
  facadeModuleId: string | null;
  imports: string[];
  viteMetadata?: { importedCss: Set<string> };
}

/**
 * Writes dist/route-preloads.json from web/preloaded-routes.json: for each listed screen, the JavaScript
 * chunks (its page's chunk and what that statically imports) and the CSS the shell does not already
 * load. The build fails when a listed page is not a chunk of its own, so the list cannot silently rot.
 */
export function routePreloads(webRoot: string): Plugin {
  return {
    name: 'controlgraph-route-preloads',
    apply: 'build',
    generateBundle(_options, bundle) {
      const listed = JSON.parse(readFileSync(resolve(webRoot, 'preloaded-routes.json'), 'utf8')) as Record<string, string>;
      const chunks = Object.values(bundle).filter((item): item is typeof item & ChunkInfo => item.type === 'chunk') as unknown as ChunkInfo[];
      const byFile = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
      const closure = (start: string[]): Set<string> => {
        const seen = new Set<string>();
        const walk = (file: string) => {
          if (seen.has(file)) return;
          seen.add(file);
          for (const next of byFile.get(file)?.imports ?? []) walk(next);
        };
        start.forEach(walk);
        return seen;
      };
      const shell = closure(chunks.filter((chunk) => chunk.isEntry).map((chunk) => chunk.fileName));
      const shellCss = new Set([...shell].flatMap((file) => [...(byFile.get(file)?.viteMetadata?.importedCss ?? [])]));
      const preloads: RoutePreloads = {};
      for (const [path, source] of Object.entries(listed)) {
        if (path.startsWith('//')) continue;
        const page = chunks.find((chunk) => chunk.facadeModuleId === resolve(webRoot, source));
        if (!page) this.error(`preloaded-routes.json: ${source} (for ${path}) is not a chunk of its own; is it a lazy route's page?`);
        const own = [...closure([page.fileName])].filter((file) => !shell.has(file));
        const css = [...new Set(own.flatMap((file) => [...(byFile.get(file)?.viteMetadata?.importedCss ?? [])]))].filter((file) => !shellCss.has(file));
        preloads[path] = { js: own.map((file) => `/${file}`), css: css.map((file) => `/${file}`) };
      }
      this.emitFile({ type: 'asset', fileName: 'route-preloads.json', source: `${JSON.stringify(preloads, null, 2)}\n` });
    },
  };
}
