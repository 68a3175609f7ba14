import autocannon from 'autocannon';

export interface LoadSpec {
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  path: string;
  headers?: Record<string, string>;
  /** Called once per request, so bodies can rotate over contacts or be unique. */
  body: () => unknown;
  seconds: number;
  connections?: number;
  /** A short unmeasured run first, so the JIT and the connection pools are warm. */
  warmupSeconds?: number;
}

export interface LoadResult {
  /** Responses per second over the measured run (all responses; non2xx says how many failed). */
  rps: number;
  /** Latency in milliseconds. */
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** Status code -> count, to show what the failures were. */
  statuses: Record<string, number>;
}

/** POSTs JSON bodies at the target from `connections` keep-alive connections (autocannon, 10 by default). */
export async function load(spec: LoadSpec): Promise<LoadResult> {
  if (spec.warmupSeconds) await run({ ...spec, seconds: spec.warmupSeconds });
  return run(spec);
}

async function run(spec: LoadSpec): Promise<LoadResult> {
  const headers = { 'content-type': 'application/json', ...spec.headers };
  const result = await autocannon({
    url: spec.baseUrl,
    connections: spec.connections ?? 10,
    duration: spec.seconds,
    requests: [
      { method: 'POST', path: spec.path, headers, setupRequest: (request) => ({ ...request, body: JSON.stringify(spec.body()) }) },
    ],
  });
  const statuses: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = Number(count);
  const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
  return {
    rps: requests / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests,
    non2xx: result.non2xx,
    errors: result.errors,
    statuses,
  };
}
