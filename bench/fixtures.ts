import type { Config } from '../src/config.js';
import type { Db } from '../src/db/connect.js';
import { writeContact } from '../src/modules/contacts/contacts.service.js';
import { makeAccount, makeField, makeKey, makeKpi, uniq } from '../test/helpers/factories.js';
import { makeEmailCampaign } from '../test/helpers/herald.js';

export interface Fixtures {
  accountId: string;
  key: string;
  /** A tag of this run, in every address it makes, so runs on one PostgreSQL never collide. */
  run: string;
  emails: string[];
  contactIds: string[];
  /** Immediate, re-entry on, cooldown 0: every trigger queues a send. */
  immediateCampaignId: string;
  /** Delay 1 hour: the first trigger per contact creates a pending send, later ones restart it. */
  delayCampaignId: string;
}

/**
 * A fresh pro account with no allowance (the monthly count would otherwise refuse triggers),
 * an all-scopes key, a custom field and a KPI, `contacts` contacts and two campaigns.
 */
export async function makeFixtures(db: Db, config: Config, contacts: number): Promise<Fixtures> {
  const run = uniq('r');
  const account = await makeAccount(db, { plan: 'pro', allowance: null });
  const key = await makeKey(db, config, account.id);
  await makeField(db, account.id, 'City', 'location');
  await makeKpi(db, account.id, 'ltv', 'Lifetime value');
  const emails = Array.from({ length: contacts }, (_, i) => `lead${i}-${run}@bench.example.com`);
  const contactIds: string[] = new Array(contacts);
  // Ten at a time: PostgreSQL round trips overlap; SQLite serialises them anyway.
  for (let start = 0; start < contacts; start += 10) {
    await Promise.all(
      emails.slice(start, start + 10).map(async (email, j) => {
        contactIds[start + j] = (await writeContact(db, account.id, { email, name: `Lead ${start + j}` })).id;
      }),
    );
  }
  const t = { db, config };
  const immediate = await makeEmailCampaign(t, account.id, { name: 'Bench immediate', reentry: true, cooldownDays: 0 });
  const delay = await makeEmailCampaign(t, account.id, {
    name: 'Bench delay',
    mode: 'delay',
    delaySeconds: 3600,
    reentry: true,
    cooldownDays: 0,
  });
  return { accountId: account.id, key: key.key, run, emails, contactIds, immediateCampaignId: immediate.id, delayCampaignId: delay.id };
}
