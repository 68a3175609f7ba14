/**
 * Counts shown in the segment list, kept for a minute (docs/decisions.md, Segments that lead
 * somewhere): one count reads up to every contact or every event of a type, so a list of many
 * segments counted afresh on every visit would take seconds on a large account. A count is
 * keyed by the segment and its last change, so an edited segment is counted again at once;
 * new contacts and events show within COUNT_TTL_MS. Each process keeps its own.
 */
export const COUNT_TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

const counts = new Map<string, { count: number; countedAt: number }>();

/** The segment's count, from the last minute or counted now by `count`. */
export async function recentCount(
  key: { accountId: string; segmentId: string; updatedAt: string; criteria: unknown },
  now: number,
  count: () => Promise<number>,
): Promise<{ count: number; countedAt: number }> {
  const id = `${key.accountId} ${key.segmentId} ${key.updatedAt} ${JSON.stringify(key.criteria)}`;
  const kept = counts.get(id);
  if (kept && now - kept.countedAt < COUNT_TTL_MS) return kept;
  const fresh = { count: await count(), countedAt: now };
  counts.delete(id);
  counts.set(id, fresh);
  // Oldest first in a Map: the bound drops the counts least recently made.
  if (counts.size > MAX_ENTRIES) counts.delete(counts.keys().next().value!);
  return fresh;
}

/** Forgets every kept count (the benchmark measures a list counted afresh with it). */
export function forgetCounts(): void {
  counts.clear();
}
