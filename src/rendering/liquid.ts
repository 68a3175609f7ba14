import { type FS, Liquid, type LiquidOptions, Tag, type TagToken, type Template, type TopLevelToken } from 'liquidjs';
import { lruGet } from '../lru.js';

/**
 * The Liquid engines for every template (email subject/html/text, WhatsApp parameters).
 * A missing variable renders empty (marketers' templates meet contacts with gaps); a syntax
 * error is caught when the campaign is saved, never at send time.
 *
 * Templates never read files. Liquid's `include`, `render` and `layout` tags load a file named by
 * the template, by default from the process's working directory: a template could then show the
 * server's files (Herald's secret, the SQLite database with every account's contacts) in a
 * message or a preview. Herald has no partials, so those tags are refused when a template is
 * parsed (a clear error when the campaign is saved, and a permanent failure for a template stored
 * before), and the engines' file system holds no file at all, whatever a future tag might ask.
 *
 * Rendering is synchronous (renderSync): every tag and filter is, and the asynchronous render
 * drives the same generators through a promise per step (about 60% more CPU per template).
 */
export class TemplateError extends Error {}

const FILE_TAGS = ['include', 'render', 'layout'] as const;

/** A tag that cannot be used: parsing a template that holds it fails. */
class RefusedFileTag extends Tag {
  constructor(token: TagToken, remainTokens: TopLevelToken[], liquid: Liquid) {
    super(token, remainTokens, liquid);
    throw new Error(`the "${token.name}" tag is not supported: templates cannot load other files`);
  }

  render(): void {}
}

const notFound = (file: string) => new Error(`no such template file: ${file}`);

/** A file system with no file in it. */
const NO_FILES: FS = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async (file) => {
    throw notFound(file);
  },
  readFileSync: (file) => {
    throw notFound(file);
  },
  resolve: (_dir, file) => file,
  contains: async () => false,
  containsSync: () => false,
};

function engine(options: LiquidOptions): Liquid {
  const liquid = new Liquid({ strictVariables: false, strictFilters: true, fs: NO_FILES, root: [], relativeReference: false, ...options });
  for (const name of FILE_TAGS) liquid.registerTag(name, RefusedFileTag);
  return liquid;
}

const plainEngine = engine({});
/** For HTML bodies: variables are escaped so contact data cannot inject markup. */
const htmlEngine = engine({ outputEscape: 'escape' });

/** Throws TemplateError with the parser's message when the source is not valid Liquid. */
export function checkTemplate(source: string): void {
  try {
    plainEngine.parse(source);
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
const parsedHtml = new Map<string, Template[]>();

export function renderTemplate(source: string, variables: Record<string, unknown>): string {
  return plainEngine.renderSync(parsedWith(plainEngine, parsedPlain, source), variables);
}

/** An HTML body: every output escaped. */
export function renderHtmlTemplate(source: string, variables: Record<string, unknown>): string {
  return htmlEngine.renderSync(parsedWith(htmlEngine, parsedHtml, source), variables);
}
