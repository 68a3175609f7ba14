import type { Logger } from 'pino';
import type { Db } from '../../db/connect.js';
import { anyUserExists } from '../users/users.service.js';

/**
 * On a database with no users at all, tells the operator how to create the first
 * administrator: nobody can sign in to the panel before that, and the panel cannot create
 * the first account itself (it would need someone signed in).
 */
export async function hintFirstAdministrator(db: Db, logger: Logger, panelUrl: string): Promise<void> {
  if (await anyUserExists(db)) return;
  logger.warn(
    {
      steps: [
        'bin/herald account create --name "Your company"',
        'bin/herald user create --account acc_... --email you@example.com --password "at least 8 characters" --role admin',
      ],
      panel: panelUrl,
    },
    'no users yet: create the first administrator with bin/herald (steps), then sign in to the panel',
  );
}
