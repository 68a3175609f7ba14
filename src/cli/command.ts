import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import { AppError } from '../errors.js';

/** What every command gets: the same configuration and database as the server. */
export interface CliContext {
  config: Config;
  db: Db;
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** Repeatable string option (e.g. --webhook URL --webhook URL). */
  multiple?: boolean;
}

export interface Command {
  /** Option names without the leading dashes. */
  options: Record<string, OptionSpec>;
  run(ctx: CliContext, values: Record<string, unknown>): Promise<object>;
}

/** `herald GROUP ACTION`: commands grouped by noun. */
export type CommandGroup = Record<string, Command>;

/** A usage mistake: printed as is, exit 2. */
export class UsageError extends Error {}

export function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function optionalString(values: Record<string, unknown>, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

export function parseBool(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new UsageError(`--${name} must be true or false, got '${value}'`);
}

/** A whole number, or null for `none` where `none` is allowed. */
export function parseCount(value: string | undefined, name: string, allowNone: boolean): number | null | undefined {
  if (value === undefined) return undefined;
  if (allowNone && value === 'none') return null;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number${allowNone ? ' or none' : ''}, got '${value}'`);
  return Number(value);
}

/**
 * WHEN of interfaces.md: a date (`2026-12-31`, meaning the end of that day UTC) or a full
 * timestamp; `none` clears it where allowed. A time in the past is accepted.
 */
export function parseWhen(value: string | undefined, name: string, allowNone: boolean): number | null | undefined {
  if (value === undefined) return undefined;
  if (allowNone && value === 'none') return null;
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (day) {
    const [y, m, d] = [Number(day[1]), Number(day[2]), Number(day[3])];
    const end = Date.UTC(y, m - 1, d, 23, 59, 59, 999);
    if (new Date(end).getUTCDate() !== d) throw new UsageError(`--${name} is not a real date: '${value}'`);
    return end;
  }
  const at = /^\d{4}-\d{2}-\d{2}T/.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(at))
    throw new UsageError(
      `--${name} must be a date (2026-12-31) or a full ISO 8601 timestamp${allowNone ? ', or none' : ''}, got '${value}'`,
    );
  return at;
}

export { AppError };
