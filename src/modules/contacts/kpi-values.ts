/**
 * KPI values are fixed-point decimals (decisions.md, Limits): 6 decimal places, totals within
 * ±999,999,999.999999, stored as integer millionths ("micros"). Every total is then an integer
 * below 2^53: exact in JavaScript, in SQLite's INTEGER and in PostgreSQL's bigint.
 */
export const KPI_DECIMALS = 6;
export const KPI_MAX_MICROS = 999_999_999_999_999;
const MAX_INTEGER_DIGITS = 9;

export const KPI_RANGE_TEXT = '-999999999.999999 to 999999999.999999';

export type KpiIncrement = { micros: number } | { problem: 'not a number' | 'out of range' };

// As custom Number fields: a decimal point, never a comma; no exponent, no hex, no `Infinity`.
const DECIMAL_TEXT = /^([+-]?)(\d*)(?:\.(\d+))?$/;
const TYPED_DECIMAL = /^[+-]?(\d+(\.\d+)?|\.\d+)$/;

/**
 * An increment as integer micros, from the decimal text that was sent: a numeric string is
 * read digit by digit, a JSON number from its shortest round-trip form (the digits sent, for
 * up to 15 significant digits, which covers the whole range at 6 places). Never float maths.
 * Rounded half away from zero at the 6th decimal place.
 */
export function parseKpiIncrement(value: unknown): KpiIncrement {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return { problem: 'not a number' };
    text = plainDecimal(value);
  } else if (typeof value === 'string' && TYPED_DECIMAL.test(value.trim())) {
    text = value.trim();
  } else {
    return { problem: 'not a number' };
  }
  const [, sign, integer = '', fraction = ''] = DECIMAL_TEXT.exec(text)!;
  const digits = integer.replace(/^0+/, '');
  if (digits.length > MAX_INTEGER_DIGITS) return { problem: 'out of range' };
  const places = fraction.padEnd(KPI_DECIMALS + 1, '0');
  const roundUp = places[KPI_DECIMALS]! >= '5' ? 1 : 0;
  // At most 9 + 6 digits: exact as a Number.
  const micros = Number(digits || '0') * 10 ** KPI_DECIMALS + Number(places.slice(0, KPI_DECIMALS)) + roundUp;
  if (micros > KPI_MAX_MICROS) return { problem: 'out of range' };
  return { micros: sign === '-' && micros !== 0 ? -micros : micros };
}

/** The JSON number of a total or increment in micros (the nearest double: prints as its 6-place decimal). */
export const microsToNumber = (micros: number): number => micros / 10 ** KPI_DECIMALS;

/** `String(n)` without its exponent: `1e-7` is `0.0000001`, `1.7e+308` a 309-digit integer. */
function plainDecimal(n: number): string {
  const text = String(n);
  const e = text.indexOf('e');
  if (e < 0) return text;
  const sign = text.startsWith('-') ? '-' : '';
  const mantissa = text.slice(sign.length, e);
  const exponent = Number(text.slice(e + 1));
  const digits = mantissa.replace('.', '');
  // String() writes one digit before the point: the point moves `exponent` places from there.
  const point = 1 + exponent;
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}
