import { MAX_NAME_LENGTH } from './campaign-settings.js';

/**
 * The name of a campaign's copy (docs/decisions.md, Editing and deleting): "Name (copy)", then
 * "Name (copy 2)", "Name (copy 3)" ... the first one no campaign of the account has. The
 * original name is shortened when the suffix would pass the 255-character limit.
 */
export function copyName(original: string, taken: ReadonlySet<string>): string {
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? ' (copy)' : ` (copy ${n})`;
    const name = `${original.slice(0, MAX_NAME_LENGTH - suffix.length).trimEnd()}${suffix}`;
    if (!taken.has(name)) return name;
  }
}

/** What every copy name of `original` starts with (to read the names already taken in one query). */
export const copyNamePrefix = (original: string) => original.slice(0, MAX_NAME_LENGTH - ' (copy 99999)'.length).trimEnd();
