import type { FastifyInstance } from 'fastify';

export interface Route {
  method: string;
  /** With Fastify's `:name` parameters, e.g. `/admin/api/keys/:id`. */
  url: string;
  /** How often the generator picks it, relative to the others (default 3). */
  weight?: number;
}

/**
 * Every route the app registered, read from Fastify's own route tree (`printRoutes`), so a route
 * added later is fuzzed without touching this suite. HEAD twins of GET routes are left out (the
 * fuzzer sends HEAD on its own), and so are wildcard routes (static files).
 */
export function registeredRoutes(app: FastifyInstance): Route[] {
  const routes: Route[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:│ {3}| {4})*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    const url = stack.join('');
    if (!match[3] || url.includes('*')) continue;
    for (const method of match[3].split(', ')) if (method !== 'HEAD') routes.push({ method, url });
  }
  return routes;
}
