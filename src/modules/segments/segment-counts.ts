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

type CountKey = { accountId: string; segmentId: string; updatedAt: string; criteria: unknown };
const idOf = (key: CountKey) => `${key.accountId} ${key.segmentId} ${key.updatedAt} ${JSON.stringify(key.criteria)}`;

/**
 * The segments' counts, those from the last minute as kept and the others counted now, all
 * at once, by `countAll` (given the positions of the keys to count, it answers their counts
 * in that order): the list counts what it must in one statement rather than one per segment.
 */
export async function recentCounts(
  keys: CountKey[],
  now: number,
  countAll: (missing: number[]) => Promise<number[]>,
): Promise<{ count: number; countedAt: number }[]> {
  const found = keys.map((key) => {
    const kept = counts.get(idOf(key));
    return kept && now - kept.countedAt < COUNT_TTL_MS ? kept : undefined;
  });
  const missing = found.flatMap((kept, i) => (kept ? [] : [i]));
  if (missing.length === 0) return found as { count: number; countedAt: number }[];
  const fresh = await countAll(missing);
  missing.forEach((at, i) => {
    const entry = { count: fresh[i]!, countedAt: now };
    const id = idOf(keys[at]!);
    counts.delete(id);
    counts.set(id, entry);
    found[at] = entry;
  });
  // Oldest first in a Map: the bound drops the counts least recently made.
  while (counts.size > MAX_ENTRIES) counts.delete(counts.keys().next().value!);
  return found as { count: number; countedAt: number }[];
}

/** Forgets every kept count (the benchmark measures a list counted afresh with it). */
export function forgetCounts(): void {
  counts.clear();
}
