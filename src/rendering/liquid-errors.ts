/**
 * Liquid errors in words for the people who write templates (issue 13, Authoring): where
 * ("line 2") and what ("tag 'iff' is not defined"), never the parser's stack or its
 * `, line:2, col:5` suffix. The field's name is the caller's (campaign-settings.ts): this file
 * knows Liquid, not forms.
 */

interface LiquidLike {
  message?: unknown;
  token?: { getPosition?: () => [number, number] };
  cause?: unknown;
}

/** The line (1-based) the error points at, when the parser knows it. */
function lineOf(err: LiquidLike): number | undefined {
  try {
    const position = err.token?.getPosition?.();
    return position && Number.isInteger(position[0]) ? position[0] : undefined;
  } catch {
    return undefined;
  }
}

/** The first line of the message, its position suffix dropped, the commonest phrasings reworded. */
function wordsOf(message: string): string {
  const first = (message.split('\n')[0] ?? '').replace(/,\s*line:\d+,\s*col:\d+\s*$/, '').trim();
  const tag = /^tag "([^"]*)" not found$/.exec(first);
  if (tag) return `tag '${tag[1]}' is not defined`;
  const filter = /^undefined filter: (.*)$/.exec(first);
  if (filter) return `filter '${filter[1]}' is not defined`;
  const unclosed = /^(tag|output) (.*) not closed$/.exec(first);
  if (unclosed) return `${unclosed[1]} ${unclosed[2]} is not closed`;
  return first || 'invalid template';
}

/**
 * "Subject, line 1: tag 'iff' is not defined" from a liquidjs error (or an error whose
 * `cause` is one: rendering/liquid.ts's TemplateError keeps the parser's error there).
 */
export function describeLiquidError(err: unknown, field: string): string {
  const own = (err ?? {}) as LiquidLike;
  const source = own.cause && typeof own.cause === 'object' ? (own.cause as LiquidLike) : own;
  const line = lineOf(source);
  const words = wordsOf(String(source.message ?? own.message ?? ''));
  return line === undefined ? `${field}: ${words}` : `${field}, line ${line}: ${words}`;
}
