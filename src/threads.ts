import { Worker } from 'node:worker_threads';

/**
 * Starts the thread whose entry module sits beside the caller's: `entry` without its extension
 * (`./smtp-thread`), resolved against `callerUrl` (the caller's import.meta.url). From the
 * compiled build the thread loads the `.js` file; from the TypeScript sources (tests, benches,
 * `--import tsx`) the `.ts` file, through tsx: Node 20 does not pass `--import tsx` on to a
 * thread, so the thread registers tsx, then loads its entry.
 */
export function startThread(callerUrl: string, entry: string, workerData: Record<string, unknown>): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`${entry}.js`, callerUrl), { workerData });
  return new Worker(THROUGH_TSX, {
    eval: true,
    workerData: { ...workerData, entry: new URL(`${entry}.ts`, callerUrl).href, tsx: import.meta.resolve('tsx/esm/api') },
  });
}

const THROUGH_TSX = `
const { workerData } = require('node:worker_threads');
import(workerData.tsx).then(({ register }) => { register(); return import(workerData.entry); });
`;
