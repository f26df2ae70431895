import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { routePreloads } from './build/route-preloads-plugin.ts';
import { precompress } from './build/precompress-plugin.ts';

/**
 * The console builds into web/dist, which the service serves at `/` (src/modules/console). In
 * development `npx vite web` proxies the API to a running `npm start`.
 */
const webRoot = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: webRoot,
  plugins: [react(), routePreloads(webRoot), precompress()],
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
