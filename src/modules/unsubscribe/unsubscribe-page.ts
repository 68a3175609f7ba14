/**
 * Everything a recipient reads on the unsubscribe pages, in one place so it can be translated
 * (or replaced per account later) without touching the routes.
 */
export const UNSUBSCRIBE_TEXT = {
  lang: 'en',
  confirmTitle: 'Unsubscribe',
  confirmBody: 'Do you want to stop receiving these messages?',
  confirmButton: 'Unsubscribe',
  doneTitle: 'You are unsubscribed',
  doneBody: 'You will not receive these messages any more.',
  invalidTitle: 'Link not valid',
  invalidBody: 'This unsubscribe link is not valid. Please use the link from the message you received.',
} as const;

type Text = typeof UNSUBSCRIBE_TEXT;

export function confirmPage(text: Text = UNSUBSCRIBE_TEXT): string {
  // The button posts the RFC 8058 one-click body to the page's own address (no action
  // attribute), so the page and a mailbox provider's one-click request take the same path,
  // whatever host or path prefix sits in front of the service.
  return page(
    text.lang,
    text.confirmTitle,
    `<p>${escapeHtml(text.confirmBody)}</p>
<form method="post">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">${escapeHtml(text.confirmButton)}</button>
</form>`,
  );
}

export function donePage(text: Text = UNSUBSCRIBE_TEXT): string {
  return page(text.lang, text.doneTitle, `<p>${escapeHtml(text.doneBody)}</p>`);
}

export function invalidPage(text: Text = UNSUBSCRIBE_TEXT): string {
  return page(text.lang, text.invalidTitle, `<p>${escapeHtml(text.invalidBody)}</p>`);
}

function page(lang: string, title: string, body: string): string {
  return `<!doctype html>
<html lang="${escapeHtml(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}button{font:inherit;padding:.5rem 1.25rem;cursor:pointer}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
