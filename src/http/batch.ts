import type { FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { ERROR_MESSAGE } from '../contract/common.js';
import type { ItemOutcome } from '../db/item-transactions.js';
import { AppError } from '../errors.js';
import { errorBody, validationDetails } from './error-handler.js';
import { type DeclaredError, IDEMPOTENCY_ERRORS, JSON_BODY_ERRORS, KEY_ERRORS } from './operation-docs.js';
import { unstorableStringError } from './string-guard.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A batch route: its items are checked one by one (schema, unstorable strings), not the body as a whole. */
    batch?: true;
  }
}

/** Most items one batch request carries (decisions.md, Batch writes). */
export const MAX_BATCH_ITEMS = 1000;
/** A batch's own body limit: 1,000 items do not fit in the 1 MiB of a single call. */
export const MAX_BATCH_BODY_BYTES = 10 * 1024 * 1024;

/** `{"items": [...]}`: each item is checked on its own against its single endpoint's body schema. */
export function batchBody(itemDescription: string) {
  return Type.Object(
    {
      items: Type.Array(Type.Unknown({ description: itemDescription }), {
        minItems: 1,
        maxItems: MAX_BATCH_ITEMS,
        [ERROR_MESSAGE]: `must be a list of 1 to ${MAX_BATCH_ITEMS} items`,
        description: `1 to ${MAX_BATCH_ITEMS} items, applied in order.`,
      }),
    },
    { additionalProperties: false },
  );
}

/** What a batch request as a whole can be refused for (each item's errors are in its result). */
export const BATCH_ERRORS: DeclaredError[] = [
  ...KEY_ERRORS,
  ...JSON_BODY_ERRORS.filter((code) => code !== 'VALIDATION'),
  { code: 'VALIDATION', details: [{ path: '/items', message: `must be a list of 1 to ${MAX_BATCH_ITEMS} items` }] },
  ...IDEMPOTENCY_ERRORS,
];

/** One result per item, in the items' order. */
export const BatchResponse = Type.Object(
  {
    results: Type.Array(
      Type.Object({
        status: Type.Integer({ description: "The status the item's single call would have answered." }),
        body: Type.Unknown({ description: "That call's body: its 200 body, or its error body (statusCode, error, message, details)." }),
      }),
    ),
  },
  { description: 'Always 200 once the request itself is accepted; each item says how it went.' },
);

export interface BatchResult {
  status: number;
  body: unknown;
}

/**
 * A batch route's handler: each item is checked as its single endpoint's body is (the same
 * schema, compiled once per route by the app's own ajv, with the same `details`; then the unstorable-string
 * check), the items that pass are written by `write` (one outcome each, in order), and every
 * item gets the status and body its single call would have answered.
 */
export async function runBatch<I, R>(
  request: FastifyRequest,
  itemSchema: TSchema,
  items: readonly unknown[],
  /**
   * Writes the valid items. `answer` turns their outcomes into the whole 200 body (with the
   * items refused here): the body an Idempotency-Key stores, in the write's transaction.
   */
  write: (valid: I[], answer: (outcomes: ItemOutcome<R>[]) => { results: BatchResult[] }) => Promise<ItemOutcome<R>[]>,
): Promise<{ results: BatchResult[] }> {
  // Fastify caches the compiled function per route and schema object: compiled on the first call only.
  const validate = request.compileValidationSchema(itemSchema, 'body');
  const results: BatchResult[] = new Array(items.length);
  const valid: I[] = [];
  const positions: number[] = [];
  items.forEach((item, i) => {
    const refused = validate(item)
      ? unstorableStringError(item)
      : new AppError('VALIDATION', { details: validationDetails((validate.errors ?? []) as Parameters<typeof validationDetails>[0]) });
    if (refused) {
      results[i] = { status: refused.status, body: errorBody(refused) };
    } else {
      valid.push(item as I);
      positions.push(i);
    }
  });
  const answer = (outcomes: ItemOutcome<R>[]) => {
    const all = results.slice();
    outcomes.forEach((outcome, j) => {
      all[positions[j]!] = outcome.ok ? { status: 200, body: outcome.value } : failedItem(request, outcome.error);
    });
    return { results: all };
  };
  return answer(valid.length === 0 ? [] : await write(valid, answer));
}

function failedItem(request: FastifyRequest, error: unknown): BatchResult {
  if (error instanceof AppError) return { status: error.status, body: errorBody(error) };
  // Our bug, as in the error handler: logged in full, answered without internals.
  request.log.error({ err: error }, 'unhandled error in a batch item');
  return { status: 500, body: errorBody(new AppError('INTERNAL'), request.id) };
}
