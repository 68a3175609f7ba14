import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** The admin panel is built into dist/admin-ui and served by Herald itself at /admin. */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/admin/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/admin-ui', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
  },
  server: {
    // `npx vite --config src/admin-ui/vite.config.ts` for front-end work, against `npm start` on :3000.
    proxy: { '/admin/api': 'http://127.0.0.1:3000' },
  },
});
