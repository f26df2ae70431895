import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Plugin } from 'vite';

const brotli = promisify(brotliCompress);
const gz = promisify(gzip);

/** Text files worth compressing; images the build copies (favicon.svg) are small and top-level. */
const COMPRESSIBLE = /\.(?:js|css|svg|json)$/;
/** Below this the compressed copy saves less than a packet. */
const MIN_BYTES = 1024;

/**
 * Writes a brotli (`.br`) and a gzip (`.gz`) copy beside each built asset, once per build, so the
 * service sends them as they are (`@fastify/static`'s `preCompressed`, src/modules/console/routes.ts)
 * instead of sending the files uncompressed (1.2 MB for a cold load of the findings screen) or
 * compressing them again for every request. Brotli at its best quality: the cost is the build's.
 */
export function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'controlgraph-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    async closeBundle() {
      const assets = join(outDir, 'assets');
      const names = (await readdir(assets)).filter((name) => COMPRESSIBLE.test(name));
      await Promise.all(
        names.map(async (name) => {
          const body = await readFile(join(assets, name));
          if (body.length < MIN_BYTES) return;
          const [br, gzipped] = await Promise.all([
            brotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
            gz(body, { level: 9 }),
          ]);
          await Promise.all([writeFile(join(assets, `${name}.br`), br), writeFile(join(assets, `${name}.gz`), gzipped)]);
        }),
      );
    },
  };
}
