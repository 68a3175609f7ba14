import { AppError, type Problem } from '../../errors.js';

/**
 * The account's unsubscribe page (issue 13, Authoring; decisions.md "Authoring"): its language
 * (the page's `lang`) and texts, edited on the account page of the admin panel. Stored as JSON
 * of what the account changed (`accounts.unsubscribe_page`); every text left out, blank or
 * cleared is the English default, so a new default reaches every account that kept the old one.
 */
export const PAGE_TEXT_KEYS = ['confirmTitle', 'confirmBody', 'confirmButton', 'doneTitle', 'doneBody', 'testBody'] as const;
export type PageTextKey = (typeof PAGE_TEXT_KEYS)[number];
export type PageTexts = { lang: string } & Record<PageTextKey, string>;

export const DEFAULT_PAGE_TEXTS: PageTexts = {
  lang: 'en',
  confirmTitle: 'Unsubscribe',
  confirmBody: 'Do you want to stop receiving these messages?',
  confirmButton: 'Unsubscribe',
  doneTitle: 'You are unsubscribed',
  doneBody: 'You will not receive these messages any more.',
  testBody: 'This link came with a test message: nothing was changed.',
};

/** A text of the page: one paragraph at most, so no control characters (line breaks included). */
export const MAX_PAGE_TEXT_LENGTH = 500;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL = /[\x00-\x1f\x7f]/;
/** A BCP 47 language tag in its common shapes: `en`, `fr`, `pt-BR`, `zh-Hant-TW`. */
const LANG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/;

/** An update: a member given changes; null or '' goes back to the default. */
export type PageTextsUpdate = Partial<Record<keyof PageTexts, string | null>>;

/** The page as shown: the stored changes over the defaults. Unreadable JSON shows the defaults. */
export function pageTextsOf(stored: string | null | undefined): PageTexts {
  return { ...DEFAULT_PAGE_TEXTS, ...overridesOf(stored) };
}

/** Checks an update (400 at `/unsubscribePage/<member>`, every problem at once) and returns the JSON to store, or null for all defaults. */
export function applyPageUpdate(stored: string | null | undefined, update: PageTextsUpdate): string | null {
  const problems: Problem[] = [];
  const next = overridesOf(stored);
  for (const key of ['lang', ...PAGE_TEXT_KEYS] as const) {
    const raw = update[key];
    if (raw === undefined) continue;
    const value = typeof raw === 'string' ? raw.trim() : '';
    const path = `/unsubscribePage/${key}`;
    if (value === '' || value === DEFAULT_PAGE_TEXTS[key]) delete next[key];
    else if (key === 'lang' && !LANG.test(value))
      problems.push({ path, message: `'${value}' is not a language tag (e.g. en, fr or pt-BR)` });
    else if (value.length > MAX_PAGE_TEXT_LENGTH) problems.push({ path, message: `must be at most ${MAX_PAGE_TEXT_LENGTH} characters` });
    else if (CONTROL.test(value)) problems.push({ path, message: 'must be one line, without control characters' });
    else next[key] = value;
  }
  if (problems.length > 0) throw new AppError('VALIDATION', { details: problems });
  return Object.keys(next).length === 0 ? null : JSON.stringify(next);
}

function overridesOf(stored: string | null | undefined): Partial<PageTexts> {
  if (!stored) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    return {};
  }
  const out: Partial<PageTexts> = {};
  if (parsed && typeof parsed === 'object') {
    for (const key of ['lang', ...PAGE_TEXT_KEYS] as const) {
      const value = (parsed as Record<string, unknown>)[key];
      if (typeof value === 'string' && value !== '') out[key] = value;
    }
  }
  return out;
}
