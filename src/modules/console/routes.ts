import { Type } from 'typebox';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { assertPathSegmentsFit } from '../../platform/http/path-limits.js';
import type { RoutePlugin } from '../module.js';
import { consoleBuilt, consoleDir } from './console-files.js';
import { createIndexPage } from './index-page.js';
import { CONSOLE_HEADERS } from './content-security-policy.js';

/** A file of the build's top level (favicon.svg, robots.txt): a name with an extension, no folder. */
const TOP_LEVEL_FILE = /^\/[A-Za-z0-9._-]+\.[A-Za-z0-9]+$/;
const YEAR_SECONDS = 365 * 24 * 3600;

/**
 * Serves the built console. Hashed assets are cached for a year; index.html is answered for every
 * other path outside the API so a link to /findings?severity=high opens that view, and is never cached
 * (a new build must reach the browser). Every route is public: the files hold no data, and the API
 * behind them checks the session on each call.
 */
export const consoleRoutes: RoutePlugin = async (app) => {
  const root = consoleDir();
  // Cache headers are set per route below; the plugin's own (max-age=0) would override them.
  // preCompressed: the build writes a brotli and a gzip copy beside each asset
  // (web/vite.config.ts, vite-plugin-compression2); a browser that accepts one gets it as it is, never compressed
  // per request, and a file without copies (or a client asking for none) gets the file itself.
  await app.register(fastifyStatic, { root, serve: false, index: false, cacheControl: false, preCompressed: true });

  const hidden = { hide: true, response: { 200: Type.Unsafe({}) } } as const;
  const pageFor = createIndexPage(root);
  const indexPage = async (request: FastifyRequest, reply: FastifyReply) => {
    reply.headers(CONSOLE_HEADERS);
    if (!consoleBuilt(root)) {
      return reply
        .status(503)
        .type('text/plain; charset=utf-8')
        .send('The web console is not built. Run `npm run build:web` (`npm start` builds it when it is missing or stale).\n');
    }
    return reply
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(pageFor(request.url.split('?')[0] ?? '/'));
  };

  app.get('/', { config: { public: true }, schema: hidden }, indexPage);

  app.get('/assets/*', { config: { public: true }, schema: hidden }, async (request, reply) => {
    const file = (request.params as { '*': string })['*'];
    // vary: the same URL is answered brotli, gzip or plain by the request's accept-encoding.
    reply.headers(CONSOLE_HEADERS).header('cache-control', `public, max-age=${YEAR_SECONDS}, immutable`).header('vary', 'accept-encoding');
    return reply.sendFile(`assets/${file}`);
  });

  app.get('/*', { config: { public: true }, schema: hidden }, async (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    // An unknown API path stays a JSON 404, never the console's page.
    if (path === '/api' || path.startsWith('/api/')) {
      assertPathSegmentsFit(path);
      return reply.callNotFound();
    }
    if (TOP_LEVEL_FILE.test(path)) {
      reply.headers(CONSOLE_HEADERS).header('cache-control', 'public, max-age=3600').header('vary', 'accept-encoding');
      return reply.sendFile(path.slice(1));
    }
    return indexPage(request, reply);
  });
};
