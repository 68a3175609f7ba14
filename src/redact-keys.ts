/**
 * Cuts API key values out of text bound for a log or a terminal, by what a key looks like
 * (`hk_` + letters and digits, decisions.md) rather than by the name it travels under: a key
 * pasted as `&amp;api-key=hk_…`, `api-key[]=hk_…`, `;api-key=hk_…`, in a header, an error
 * message or a stack is cut the same way.
 *
 * The text is split into words at the characters that end a URL part or a log field; a word
 * whose percent-decoded form holds a key is replaced whole, so `hk%5F…`, `%68%6B_…` and a key
 * with escaped letters are caught too (decoded twice, for a value escaped once more by a
 * proxy or a copy-paste).
 */
const WORD = /[^\s"'`&;?=/#,<>()[\]{}\\|]+/g;
const KEY_SHAPE = /hk_[0-9a-z]/i;
const REDACTED = '[REDACTED]';

export function redactKeys(text: string): string {
  // Most text has neither a key prefix nor an escape: it is left untouched without a scan.
  if (!text.includes('%') && !/hk_/i.test(text)) return text;
  return text.replace(WORD, (word) => (KEY_SHAPE.test(decodeTwice(word)) ? REDACTED : word));
}

function decodeTwice(word: string): string {
  return decodeEscapes(decodeEscapes(word));
}

/** Decodes each `%XX` on its own so a malformed escape elsewhere cannot hide the rest. */
export function decodeEscapes(value: string): string {
  return value.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
