import { DEFAULT_PAGE_TEXTS, type PageTexts } from './page-settings.js';

/**
 * The pages a recipient reads after an unsubscribe link, in the account's language and words
 * (page-settings.ts) and under its name. Every text is HTML-escaped: the account's texts and
 * name are data, never markup.
 */

/** A link that names no send: no account is known, so the English default. */
export const INVALID_PAGE_TEXT = {
  lang: 'en',
  title: 'Link not valid',
  body: 'This unsubscribe link is not valid. Please use the link from the message you received.',
} as const;

/** Whose page it is: the account's name heads it; its texts and language. */
export interface PageBrand {
  accountName: string;
  texts: PageTexts;
}

const DEFAULT_BRAND: PageBrand = { accountName: '', texts: DEFAULT_PAGE_TEXTS };

export function confirmPage(brand: PageBrand = DEFAULT_BRAND): string {
  const { texts } = brand;
  // The button posts the RFC 8058 one-click body to the page's own address (no action
  // attribute), so the page and a mailbox provider's one-click request take the same path,
  // whatever host or path prefix sits in front of the service.
  return page(
    texts.lang,
    brand.accountName,
    texts.confirmTitle,
    `<p>${escapeHtml(texts.confirmBody)}</p>
<form method="post">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">${escapeHtml(texts.confirmButton)}</button>
</form>`,
  );
}

export function donePage(brand: PageBrand = DEFAULT_BRAND): string {
  return page(brand.texts.lang, brand.accountName, brand.texts.doneTitle, `<p>${escapeHtml(brand.texts.doneBody)}</p>`);
}

/** The link of a test sent to an address of the tester's choice: it opts no one out. */
export function testLinkPage(brand: PageBrand = DEFAULT_BRAND): string {
  return page(brand.texts.lang, brand.accountName, brand.texts.confirmTitle, `<p>${escapeHtml(brand.texts.testBody)}</p>`);
}

export function invalidPage(): string {
  return page(INVALID_PAGE_TEXT.lang, '', INVALID_PAGE_TEXT.title, `<p>${escapeHtml(INVALID_PAGE_TEXT.body)}</p>`);
}

function page(lang: string, accountName: string, title: string, body: string): string {
  const heading = accountName ? `<p class="brand">${escapeHtml(accountName)}</p>\n` : '';
  const fullTitle = accountName ? `${title} · ${accountName}` : title;
  return `<!doctype html>
<html lang="${escapeHtml(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(fullTitle)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}.brand{font-weight:600;color:#555}button{font:inherit;padding:.5rem 1.25rem;cursor:pointer}</style>
</head>
<body>
${heading}<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
