import type { FastifyInstance } from 'fastify';

/** One sample line of the Prometheus text format: name, labels, value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the sample with exactly these labels among its own (0 when it has none yet). */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const hit = samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return hit?.value ?? 0;
}

export async function scrape(app: FastifyInstance, headers: Record<string, string> = {}): Promise<{ text: string; samples: Sample[] }> {
  const res = await app.inject({ method: 'GET', url: '/metrics', headers });
  if (res.statusCode !== 200) throw new Error(`/metrics answered ${res.statusCode}: ${res.body}`);
  return { text: res.body, samples: parseMetrics(res.body) };
}
