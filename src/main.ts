import { redactKeys } from './redact-keys.js';
import { runHerald } from './server.js';

/** `npm start`: the whole service in one process (HTTP API, admin panel, dispatcher). */
runHerald('all').catch((err) => {
  console.error(`herald: ${redactKeys(err instanceof Error ? err.message : String(err))}`);
  process.exit(1);
});
