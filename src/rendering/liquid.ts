import { Liquid, type Template } from 'liquidjs';
import { lruGet } from '../lru.js';

/**
 * One Liquid engine for every template (email subject/html/text, WhatsApp parameters).
 * A missing variable renders empty (marketers' templates meet contacts with gaps); a syntax
 * error is caught when the campaign is saved, never at send time.
 */
const engine = new Liquid({ strictVariables: false, strictFilters: true });

export class TemplateError extends Error {}

/** Throws TemplateError with the parser's message when the source is not valid Liquid. */
export function checkTemplate(source: string): void {
  try {
    engine.parse(source);
  } catch (err) {
    // The parser's error stays as the cause: liquid-errors.ts reads its line for people.
    throw new TemplateError((err as Error).message.split('\n')[0] ?? 'invalid template', { cause: err });
  }
}

/** Parsed templates by source: a campaign's templates are parsed once, not once per send. */
const PARSED_CACHE_SIZE = 500;

const parsedWith = (liquid: Liquid, cache: Map<string, Template[]>, source: string) =>
  lruGet(cache, PARSED_CACHE_SIZE, source, () => liquid.parse(source));

const parsedPlain = new Map<string, Template[]>();

export async function renderTemplate(source: string, variables: Record<string, unknown>): Promise<string> {
  return engine.render(parsedWith(engine, parsedPlain, source), variables);
}

/** For HTML bodies: variables are escaped so contact data cannot inject markup. */
const htmlEngine = new Liquid({ strictVariables: false, strictFilters: true, outputEscape: 'escape' });
const parsedHtml = new Map<string, Template[]>();

export async function renderHtmlTemplate(source: string, variables: Record<string, unknown>): Promise<string> {
  return htmlEngine.render(parsedWith(htmlEngine, parsedHtml, source), variables);
}
