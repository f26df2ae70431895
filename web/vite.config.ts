import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { routePreloads } from './build/route-preloads-plugin.ts';
import { compression, defineAlgorithm } from 'vite-plugin-compression2';
import { constants } from 'node:zlib';

/**
 * The console builds into web/dist, which the service serves at `/` (src/modules/console). In
 * development `npx vite web` proxies the API to a running `npm start`.
 */
const webRoot = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: webRoot,
  plugins: [
    react(),
    routePreloads(webRoot),
    // A brotli (`.br`) and a gzip (`.gz`) copy beside each built script, style and image, so the
    // service sends them as they are (`@fastify/static`'s `preCompressed`, src/modules/console/routes.ts)
    // instead of uncompressed (1.2 MB for a cold load of the findings screen) or compressed again per
    // request. Both at their best level: the cost is the build's. Below 1 KiB a copy saves less than a packet.
    compression({
      include: /\.(?:js|css|svg|json)$/,
      // Read by the service at start, never sent.
      exclude: /route-preloads\.json$/,
      threshold: 1024,
      algorithms: [defineAlgorithm('brotliCompress', { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }), defineAlgorithm('gzip', { level: 9 })],
      logLevel: 'silent',
    }),
  ],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Route pages load on demand (web/src/app/routes.tsx); the initial bundle stays small.
    chunkSizeWarningLimit: 1200,
    // Few, larger chunks (issue 24): left to itself the bundler cut the shell and the findings screen
    // into 41 files, mostly Mantine pieces of a few hundred bytes each, and a cold load spent its time
    // asking for them. Now the shell is one chunk (everything index.html needs before any route), and
    // the libraries and ui/ pieces that four or more lazy chunks share are one `shared` chunk; what
    // fewer share stays with its pages, and the charts and the graph stay with the screens that draw them.
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            { name: 'shell', tags: ['$initial'], priority: 3 },
            {
              name: 'shared',
              test: /node_modules[\\/](?!(echarts|zrender|cytoscape|cytoscape-elk|elkjs)[\\/])|[\\/]web[\\/]src[\\/]ui[\\/](?!EChart)/,
              priority: 2,
              minShareCount: 4,
            },
          ],
        },
      },
    },
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8080' },
  },
});
