import type { Campaign } from '../modules/campaigns/campaign.js';
import type { ContactProfile } from '../modules/contacts/contacts.service.js';

/** The `data` object of the trigger call that made a send (issue 10), as stored with it. */
export type TriggerData = Record<string, unknown>;

/**
 * The Liquid variables every template of a send sees (email subject, HTML and text; WhatsApp
 * parameters): `contact`, `campaign`, `trigger` (the trigger call's `data`; empty when it
 * carried none, and in previews) and `unsubscribe_url`. Anything missing renders empty. In HTML
 * bodies every output is escaped (liquid.ts), trigger data as much as contact data: both come
 * from the caller.
 */
export function templateVariables(
  contact: ContactProfile,
  campaign: Pick<Campaign, 'id' | 'name'>,
  unsubscribeUrl: string,
  trigger?: TriggerData | null,
): Record<string, unknown> {
  return {
    contact: {
      id: contact.id,
      name: contact.name,
      email: contact.emails[0] ?? '',
      emails: contact.emails,
      phone: contact.phones[0] ?? '',
      phones: contact.phones,
      tags: contact.tags,
      fields: fieldsForTemplates(contact.fields),
      kpis: contact.kpis,
      metadata: contact.metadata,
    },
    campaign: { id: campaign.id, name: campaign.name },
    trigger: trigger ?? {},
    unsubscribe_url: unsubscribeUrl,
  };
}

/**
 * Fields by their defined name, and also by the lowercased name: the API matches field keys
 * ignoring case, so `{{ contact.fields.city }}` finds a field defined as "City". A defined
 * name always wins over an alias.
 */
function fieldsForTemplates(fields: Record<string, unknown>): Record<string, unknown> {
  // No prototype: a field named "__proto__" or "constructor" stays plain data.
  const out: Record<string, unknown> = Object.create(null);
  for (const [name, value] of Object.entries(fields)) {
    const alias = name.toLowerCase();
    if (!Object.hasOwn(fields, alias)) out[alias] = value;
  }
  return Object.assign(out, fields);
}
