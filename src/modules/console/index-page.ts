import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * index.html as served for one path. For a screen listed in the build's route-preloads.json
 * (web/preloaded-routes.json, written by web/build/route-preloads-plugin.ts) the page names, in its
 * head, what that screen will ask for next: its chunks as `modulepreload`, their CSS, and the
 * session (`GET /api/v1/auth/me`, which every signed-in screen reads first). The browser then fetches
 * them beside the shell's own files instead of one after the other once the shell has run: a cold
 * load of the findings screen asked for its chunks and the session only after 1.2 s of shell.
 */
interface Preloads {
  [path: string]: { js: string[]; css: string[] };
}

interface Loaded {
  stamp: number;
  html: string;
  routes: { segments: string[]; links: string }[];
}

/** Only what the build wrote: file names of its own assets, never anything from the request. */
const ASSET = /^\/assets\/[A-Za-z0-9._-]+\.(?:js|css)$/;
// crossorigin="anonymous" gives the preload the credentials mode of the console's fetch() (same-origin),
// so the request the session query makes takes the preloaded answer instead of asking again.
const SESSION_PRELOAD = '<link rel="preload" href="/api/v1/auth/me" as="fetch" crossorigin="anonymous">';

function linksFor(entry: { js: string[]; css: string[] }): string {
  const js = entry.js.filter((file) => ASSET.test(file)).map((file) => `<link rel="modulepreload" crossorigin href="${file}">`);
  // A preload, not a stylesheet: the shell must not wait on it; the page's chunk adds the stylesheet.
  const css = entry.css.filter((file) => ASSET.test(file)).map((file) => `<link rel="preload" as="style" href="${file}">`);
  return [...js, ...css].join('');
}

function load(dir: string): Loaded {
  const index = join(dir, 'index.html');
  const html = readFileSync(index, 'utf8');
  const preloadFile = join(dir, 'route-preloads.json');
  const preloads: Preloads = existsSync(preloadFile) ? (JSON.parse(readFileSync(preloadFile, 'utf8')) as Preloads) : {};
  const routes = Object.entries(preloads).map(([path, entry]) => ({ segments: segmentsOf(path), links: linksFor(entry) }));
  return { stamp: statSync(index).mtimeMs, html, routes };
}

const segmentsOf = (path: string) => path.split('/').filter(Boolean);

const matches = (pattern: string[], path: string[]) => pattern.length === path.length && pattern.every((segment, i) => segment.startsWith(':') || segment === path[i]);

/** Reads the build once, and again when a new build replaced index.html (`npm start` builds in place). */
export function createIndexPage(dir: string) {
  let loaded: Loaded | null = null;
  return (path: string): string => {
    const stamp = statSync(join(dir, 'index.html')).mtimeMs;
    if (!loaded || loaded.stamp !== stamp) loaded = load(dir);
    const segments = segmentsOf(path);
    const route = loaded.routes.find((candidate) => matches(candidate.segments, segments));
    if (!route) return loaded.html;
    // The session first: it is what the page's first request waits on, and the browser fetches a few
    // files at a time in the order it meets them.
    return loaded.html.replace('<script', `${SESSION_PRELOAD}<script`).replace('</head>', `${route.links}</head>`);
  };
}
