import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { startTestApp } from '../helpers/app.js';

/** Every metric the ready-made Grafana dashboard queries is one that /metrics really exposes. */
test('docs/grafana-dashboard.json is valid JSON whose queries name only metrics of /metrics', async () => {
  const dashboard = JSON.parse(readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8'));
  const exprs: string[] = [];
  const walk = (panels: any[]) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) exprs.push(target.expr);
      walk(panel.panels ?? []);
    }
  };
  walk(dashboard.panels);
  assert.ok(exprs.length >= 15, `${exprs.length} queries`);
  const used = new Set(exprs.flatMap((expr) => [...expr.matchAll(/\b((?:herald|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!)));

  const t = await startTestApp();
  try {
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    // Families, from the TYPE lines: series with labels appear only once something is counted.
    const families = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    const exposed = (name: string) => {
      if (families.has(name)) return true;
      const base = name.replace(/_(bucket|count|sum)$/, '');
      return base !== name && families.get(base) === 'histogram';
    };
    for (const name of used) {
      // The pool's and the group commit's series exist only on PostgreSQL (SQLite has neither).
      if (t.db.engine === 'sqlite' && /^herald_db_(pool|group)/.test(name)) continue;
      assert.ok(exposed(name), `the dashboard queries ${name}, which /metrics does not expose`);
    }
    for (const name of [
      'herald_sends_total',
      'herald_send_lag_seconds_bucket',
      'herald_queue_sends',
      'herald_webhook_backlog',
      'herald_http_request_duration_seconds_bucket',
    ]) {
      assert.ok(used.has(name), `the dashboard shows ${name}`);
    }
  } finally {
    await t.close();
  }
});
