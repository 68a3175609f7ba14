import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';

/** dist/admin-ui, found from src/ (tsx, tests) and from dist/src/ (the build) alike. */
function findBuiltPanel(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, 'dist', 'admin-ui');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    dir = dirname(dir);
  }
  return undefined;
}

/**
 * Serves the built admin panel at /admin: its assets as files, and index.html for every other
 * /admin path so the panel's own router handles deep links (/admin/campaigns/cmp_...).
 */
export async function registerAdminPanel(app: FastifyInstance): Promise<void> {
  // Someone who opens Herald's address in a browser is looking for the panel.
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/admin', 302));
  const root = findBuiltPanel();
  if (!root) {
    app.get('/admin', { schema: { hide: true } }, async (_request, reply) =>
      reply.code(503).type('text/plain').send('The admin panel is not built: run npm run build'),
    );
    return;
  }
  await app.register(fastifyStatic, { root, prefix: '/admin/', index: ['index.html'], wildcard: false, serve: true, schemaHide: true });
  const sendIndex = async (request: FastifyRequest, reply: FastifyReply) => {
    // An unknown API path or asset is a 404, not the panel.
    if (request.url.startsWith('/admin/api/') || request.url.startsWith('/admin/assets/')) throw new AppError('NOT_FOUND');
    reply.header('cache-control', 'no-store');
    return reply.sendFile('index.html');
  };
  app.get('/admin/*', { schema: { hide: true } }, sendIndex);
}
