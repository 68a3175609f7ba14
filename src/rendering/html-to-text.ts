/**
 * The text part of an HTML-only campaign, derived from its rendered HTML.
 *
 * Hand-written rather than a library because no HTML-to-text package is a direct dependency
 * (html-to-text is in the tree only under the mailparser dev dependency), and marketing HTML
 * needs little: drop head/style/script, links as `label (url)`, block elements as line breaks,
 * list items as `- `, entities decoded. Swapping in html-to-text later changes only this file.
 */
export function htmlToText(html: string): string {
  let s = html
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<(head|style|script|title|template)\b[\s\S]*?<\/\1\s*>/gi, '')
    // HTML collapses source white space; the line breaks of the result come from the markup below.
    .replace(/\s+/g, ' ');

  s = s.replace(/<a\b[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))[^>]*>([\s\S]*?)<\/a\s*>/gi, (_m, dq, sq, bare, label: string) => {
    const href = String(dq ?? sq ?? bare ?? '').trim();
    const shown = decodeEntities(stripTags(label)).trim();
    if (href === '' || href.startsWith('#') || /^javascript:/i.test(href)) return label;
    const target = decodeEntities(href).replace(/^mailto:/i, '');
    return shown === '' || shown === target ? href.replace(/^mailto:/i, '') : `${label} (${href.replace(/^mailto:/i, '')})`;
  });

  s = s
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<li\b[^>]*>/gi, '\n- ')
    .replace(/<\/?(p|div|h[1-6]|ul|ol|table|tr|blockquote|section|article|header|footer|hr)\b[^>]*>/gi, '\n\n')
    .replace(/<\/t[dh]\s*>/gi, ' ');
  s = decodeEntities(stripTags(s));

  return s
    .split('\n')
    .map((line) => line.replace(/[ \t\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function stripTags(html: string): string {
  return html.replace(/<[^>]*>/g, '');
}

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  copy: '©',
  reg: '®',
  trade: '™',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  laquo: '«',
  raquo: '»',
  euro: '€',
  pound: '£',
  middot: '·',
  bull: '•',
};

/** Numeric entities and the common named ones; an unknown name is left as written. */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
    }
    return NAMED[name.toLowerCase()] ?? whole;
  });
}
