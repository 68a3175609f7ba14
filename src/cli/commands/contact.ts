import { listActivity } from '../../modules/activity/activity.service.js';
import { eraseContact } from '../../modules/contacts/contact-erase.js';
import { getContactProfile, setContactFlags } from '../../modules/contacts/contacts.service.js';
import { AppError, type CommandGroup, optionalString, parseBool, required, UsageError } from '../command.js';

export const contact: CommandGroup = {
  show: {
    options: { account: { type: 'string' }, lead: { type: 'string' }, email: { type: 'string' }, phone: { type: 'string' } },
    run: async ({ db }, v) => {
      const lookup = { id: optionalString(v, 'lead'), email: optionalString(v, 'email'), phone: optionalString(v, 'phone') };
      const given = Object.values(lookup).filter((x) => x !== undefined).length;
      if (given !== 1) throw new UsageError('give exactly one of --lead, --email, --phone');
      const profile = await getContactProfile(db, required(v, 'account'), lookup);
      if (!profile) throw new AppError('LEAD_NOT_FOUND');
      return profile;
    },
  },
  update: {
    options: { account: { type: 'string' }, lead: { type: 'string' }, archived: { type: 'string' }, 'opted-out': { type: 'string' } },
    run: async ({ db }, v) => {
      const id = required(v, 'lead');
      await setContactFlags(db, required(v, 'account'), id, {
        archived: parseBool(optionalString(v, 'archived'), 'archived'),
        optedOut: parseBool(optionalString(v, 'opted-out'), 'opted-out'),
      });
      return { id };
    },
  },
  activity: {
    options: { account: { type: 'string' }, lead: { type: 'string' }, limit: { type: 'string' } },
    run: ({ db }, v) => {
      const limit = optionalString(v, 'limit');
      if (limit !== undefined && !/^\d+$/.test(limit)) throw new UsageError(`--limit must be a whole number, got '${limit}'`);
      return listActivity(db, required(v, 'account'), required(v, 'lead'), { limit: limit === undefined ? undefined : Number(limit) });
    },
  },
  /** The admin API's erase (docs/decisions.md, Erasing a contact): for good, so the id must be given, never looked up by address. */
  erase: {
    options: { account: { type: 'string' }, lead: { type: 'string' } },
    run: ({ db }, v) => eraseContact(db, required(v, 'account'), required(v, 'lead')),
  },
};
