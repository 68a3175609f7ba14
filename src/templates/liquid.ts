import { Liquid } from 'liquidjs';

/**
 * One Liquid engine for every template (email subject/html/text, WhatsApp parameters).
 * A missing variable renders empty (marketers' templates meet contacts with gaps); a syntax
 * error is caught when the campaign is saved, never at send time.
 */
const engine = new Liquid({ strictVariables: false, strictFilters: true, cache: 500 });

export class TemplateError extends Error {}

/** Throws TemplateError with the parser's message when the source is not valid Liquid. */
export function checkTemplate(source: string): void {
  try {
    engine.parse(source);
  } catch (err) {
    throw new TemplateError((err as Error).message.split('\n')[0] ?? 'invalid template');
  }
}

export async function renderTemplate(source: string, variables: Record<string, unknown>): Promise<string> {
  return engine.parseAndRender(source, variables);
}

/** For HTML bodies: variables are escaped so contact data cannot inject markup. */
const htmlEngine = new Liquid({ strictVariables: false, strictFilters: true, cache: 500, outputEscape: 'escape' });

export async function renderHtmlTemplate(source: string, variables: Record<string, unknown>): Promise<string> {
  return htmlEngine.parseAndRender(source, variables);
}
