import type { Db } from '../../../db/connect.js';
import { AppError } from '../../../errors.js';
import { findUserForSignIn, hashPassword, verifyPassword } from '../../users/users.service.js';
import { type AdminSession, openSession, readSession } from './sessions.js';
import { attemptFailed, attemptSucceeded, countAttempt } from './throttle.js';

/**
 * An unknown email is checked against this hash, so it costs the same scrypt time as a wrong
 * password: the answer's timing does not tell which emails have an account. Made once, with
 * the same parameters as real hashes.
 */
let dummyHash: Promise<string> | undefined;
const dummy = () => (dummyHash ??= hashPassword('herald-no-such-user'));

/**
 * `POST /admin/api/login`. The attempt is counted first, before the password is looked at (a
 * locked-out guesser learns nothing, not even whether the password was right, and concurrent
 * guesses cannot get past the count), then one answer for unknown email and wrong password.
 */
export async function signIn(
  db: Db,
  input: { email: string; password: string },
  ip: string,
  now = Date.now(),
): Promise<{ token: string; session: AdminSession }> {
  const email = input.email.trim().toLowerCase();
  const attempt = await countAttempt(db, email, ip, now);

  const user = await findUserForSignIn(db, email);
  const matches = await verifyPassword(input.password, user?.passwordHash ?? (await dummy()));
  if (!user || !matches) {
    await attemptFailed(db, now);
    throw new AppError('INVALID_CREDENTIALS');
  }
  await attemptSucceeded(db, attempt);
  const { token } = await openSession(db, { id: user.id, accountId: user.accountId }, now);
  const opened = await readSession(db, token, now);
  if (!opened) throw new Error('a session just opened could not be read');
  return { token, session: opened.session };
}
