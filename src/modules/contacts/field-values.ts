import type { FieldType } from '../../contract/constants.js';
import { normalizePhone } from './normalize.js';

/**
 * Custom field value formats (decisions.md, Contacts: `fields`). A value is either cleared,
 * stored in its canonical form, or refused with a reason that becomes a warning: a wrong
 * format never fails the call.
 */
export type FieldValueResult = { kind: 'clear' } | { kind: 'set'; value: StoredFieldValue } | { kind: 'invalid'; message: string };

export type StoredFieldValue = string | number | boolean | unknown[];

/** `""`, `null` and `[]` clear a field; a string of only white space counts as `""`. */
export function isEmptyValue(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === 'string') return value.trim() === '';
  return Array.isArray(value) && value.length === 0;
}

// A decimal point, never a comma; no exponent, no hex, no `Infinity`: what a person types.
const DECIMAL = /^[+-]?(\d+(\.\d+)?|\.\d+)$/;

/** A finite JSON number, or a string written with a decimal point (`"12.5"`); else undefined. */
export function parseDecimal(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (!DECIMAL.test(text)) return undefined;
  const number = Number(text);
  return Number.isFinite(number) ? number : undefined;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DMY_DATE = /^(\d{2})\/(\d{2})\/(\d{4})$/;

/** `yyyy-mm-dd` or `dd/mm/yyyy`, a real calendar date, as `yyyy-mm-dd`; else undefined. */
export function parseDate(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  let year: number, month: number, day: number;
  const iso = ISO_DATE.exec(text);
  const dmy = iso ? null : DMY_DATE.exec(text);
  if (iso) [year, month, day] = [Number(iso[1]), Number(iso[2]), Number(iso[3])];
  else if (dmy) [day, month, year] = [Number(dmy[1]), Number(dmy[2]), Number(dmy[3])];
  else return undefined;
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function parseBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toLowerCase();
  return text === 'true' ? true : text === 'false' ? false : undefined;
}

const FORMATS: Record<FieldType, { describe: string; parse: (value: unknown) => StoredFieldValue | undefined }> = {
  string: {
    describe: 'text',
    // decisions.md: a number or boolean sent to a String field is stored as its text.
    parse: (v) => (typeof v === 'string' ? v.trim() : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined),
  },
  number: { describe: 'a number with a decimal point (e.g. 12.5)', parse: parseDecimal },
  date: { describe: 'a date written yyyy-mm-dd or dd/mm/yyyy', parse: parseDate },
  boolean: { describe: 'true or false', parse: parseBoolean },
  location: { describe: 'a city name', parse: (v) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined) },
  phone: { describe: 'a phone number with + and country code', parse: (v) => (typeof v === 'string' ? normalizePhone(v) : undefined) },
  array: { describe: 'a JSON list', parse: (v) => (Array.isArray(v) ? v : undefined) },
};

/** What a field entry's value does to the contact's value of a field of this type. */
export function parseFieldValue(type: FieldType, value: unknown): FieldValueResult {
  if (isEmptyValue(value)) return { kind: 'clear' };
  const format = FORMATS[type];
  const parsed = format.parse(value);
  return parsed === undefined ? { kind: 'invalid', message: `must be ${format.describe}` } : { kind: 'set', value: parsed };
}
