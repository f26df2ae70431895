import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';

/**
 * How the service serves the console's files, over a stand-in build (a folder with an index.html and
 * one asset) so this runs without building the console; the browser tests use the real build.
 */
let built: TestApp;
let unbuilt: TestApp;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cg-console-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><head><title>ControlGraph</title><script type="module" src="/assets/index-abc123.js"></script></head><div id="root"></div>',
  );
  // What web/build/route-preloads-plugin.ts writes, with one name no build would write.
  const preloads = {
    '/findings': { js: ['/assets/FindingsPage-x1.js', '/assets/Table-x2.js'], css: ['/assets/Table-x3.css'] },
    '/findings/:id': { js: ['/assets/FindingDetailPage-y1.js', '"><script>alert(1)</script>'], css: [] },
  };
  writeFileSync(join(dir, 'route-preloads.json'), JSON.stringify(preloads));
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  // What the build (web/vite.config.ts, vite-plugin-compression2) writes beside an asset.
  writeFileSync(join(dir, 'assets', 'index-abc123.js.br'), brotliCompressSync('console.log(1)'));
  writeFileSync(join(dir, 'assets', 'index-abc123.js.gz'), gzipSync('console.log(1)'));
  writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  process.env.CONTROLGRAPH_CONSOLE_DIR = dir;
  built = await createTestApp();
  process.env.CONTROLGRAPH_CONSOLE_DIR = join(dir, 'missing');
  unbuilt = await createTestApp();
  delete process.env.CONTROLGRAPH_CONSOLE_DIR;
});
afterAll(async () => {
  await built?.close();
  await unbuilt?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the console files', () => {
  it('answers / with the page, never cached, under a strict Content-Security-Policy', async () => {
    const res = await built.app.inject({ url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('<div id="root">');
    expect(res.headers['cache-control']).toBe('no-cache');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers a console path with the page, so a link with filters opens that view', async () => {
    const res = await built.app.inject({ url: '/findings?severity=high&page=2' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<div id="root">');
  });

  it("names a screen's chunks and the session in the page's head, so they load beside the shell", async () => {
    const list = (await built.app.inject({ url: '/findings?severity=high' })).body;
    const head = list.slice(0, list.indexOf('</head>'));
    expect(head).toContain('<link rel="modulepreload" crossorigin href="/assets/FindingsPage-x1.js">');
    expect(head).toContain('<link rel="modulepreload" crossorigin href="/assets/Table-x2.js">');
    expect(head).toContain('<link rel="preload" as="style" href="/assets/Table-x3.css">');
    // The session is asked for first, before the shell's own script.
    const session = '<link rel="preload" href="/api/v1/auth/me" as="fetch" crossorigin="anonymous">';
    expect(head.indexOf(session)).toBeGreaterThan(-1);
    expect(head.indexOf(session)).toBeLessThan(head.indexOf('<script'));

    const detail = (await built.app.inject({ url: '/findings/rule-1:resource-1' })).body;
    expect(detail).toContain('href="/assets/FindingDetailPage-y1.js"');
    expect(detail).not.toContain('FindingsPage-x1');
    // Only asset names are ever written into the page.
    expect(detail).not.toContain('alert(1)');

    // A path not listed (sign-in, outside the session) gets the page as built: no session preload.
    for (const url of ['/sign-in', '/findings/a/b']) {
      const page = (await built.app.inject({ url })).body;
      expect(page).not.toContain('preload');
      expect(page).toContain('<div id="root">');
    }
  });

  it('serves hashed assets cached for a year, top-level files, and 404 for a missing one', async () => {
    const asset = await built.app.inject({ url: '/assets/index-abc123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await built.app.inject({ url: '/favicon.svg' })).statusCode).toBe(200);
    expect((await built.app.inject({ url: '/assets/nope.js' })).statusCode).toBe(404);
    // Nothing outside the build folder: an encoded climb out of assets/ finds no file.
    const climb = await built.app.inject({ url: '/assets/..%2f..%2fpackage.json' });
    expect([403, 404]).toContain(climb.statusCode);
    expect(climb.body).not.toContain('controlgraph');
  });

  it("sends the build's compressed copy of an asset to a browser that accepts it, and the file to one that does not", async () => {
    const br = await built.app.inject({ url: '/assets/index-abc123.js', headers: { 'accept-encoding': 'gzip, deflate, br, zstd' } });
    expect(br.statusCode).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toContain('javascript');
    expect(String(br.headers.vary)).toMatch(/accept-encoding/i);
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe('console.log(1)');
    const gzipped = await built.app.inject({ url: '/assets/index-abc123.js', headers: { 'accept-encoding': 'gzip' } });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    const plain = await built.app.inject({ url: '/assets/index-abc123.js' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe('console.log(1)');
  });

  it('keeps an unknown API path a JSON 404, not the page', async () => {
    const res = await built.app.inject({ url: '/api/v1/does-not-exist' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'route GET /api/v1/does-not-exist not found', details: null } });
  });

  it('answers 503 with the build command when the console is not built', async () => {
    const res = await unbuilt.app.inject({ url: '/overview' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build:web');
  });
});
