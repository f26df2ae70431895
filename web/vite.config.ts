import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { routePreloads } from './build/route-preloads-plugin.ts';

/**
 * The console builds into web/dist, which the service serves at `/` (src/modules/console). In
 * development `npx vite web` proxies the API to a running `npm start`.
 */
const webRoot = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: webRoot,
  plugins: [react(), routePreloads(webRoot)],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Route pages load on demand (web/src/app/routes.tsx); the initial bundle stays small.
    chunkSizeWarningLimit: 1200,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8080' },
  },
});
