import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/**
 * Server-assigned ids: a type prefix and a time-ordered random suffix (decisions.md, Ids).
 * The prefix guarantees an id never contains `@`, never starts with `+` and is never all
 * digits, so the `lead` string rules can never read one as an email or a phone.
 */
export type IdPrefix =
  | 'acc'
  | 'key'
  | 'usr'
  | 'ld'
  | 'ev'
  | 'cmp'
  | 'snd'
  | 'nt'
  | 'fld'
  | 'whd'
  | 'wha'
  | 'msg'
  | 'obx'
  | 'seg'
  | 'ses'
  | 'lat'
  | 'eng';

/**
 * Cryptographic randomness drawn in 4 KiB blocks: ulid asks for one number per character, and
 * a system call for each cost more than the rest of a contact write.
 */
const pool = new Uint32Array(1024);
let next = pool.length;
function bufferedRandom(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++]! / 0x1_0000_0000;
}

/** Monotonic: ids made in the same millisecond still sort in creation order (stable paging and feeds). */
const ulid = monotonicFactory(bufferedRandom);

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid().toLowerCase()}`;
}
