import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';

/**
 * The yardstick: a minimal Fastify app in this same process, listening on loopback like
 * Herald's HTTP server, with the same logger at the same level, answering a JSON echo. Every
 * Herald figure is printed as a ratio to it, so machine load and speed mostly cancel out.
 */
export async function startBare(logger: Logger): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger });
  app.post('/echo', async (request) => request.body);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, close: () => app.close() };
}
