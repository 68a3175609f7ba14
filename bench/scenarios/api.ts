import type { Fixtures } from '../fixtures.js';

export type Kind = 'write' | 'trigger' | 'batch';

export interface ApiScenario {
  name: string;
  kind: Kind;
  path: string;
  /** The next request's body (called once per request). */
  body: () => unknown;
  /** A batch: items per request, and the single-call scenario its items/s are compared with. */
  batch?: { items: number; single: string };
}

/** Items per batch request: Braze takes 75 a request, Customer.io's batches are of this order too. */
export const BATCH_ITEMS = 100;

const CITIES = ['Paris', 'Lyon', 'Nantes', 'Lille'];

/** The public API calls under load, in the order they run. Bodies rotate over the pre-made contacts. */
export function apiScenarios(f: Fixtures): ApiScenario[] {
  const n = f.emails.length;
  let updates = 0;
  let creates = 0;
  let events = 0;
  let immediate = 0;
  let delayed = 0;
  let leadTriggers = 0;
  let restarts = 0;
  const update = (i: number) => ({
    email: f.emails[i % n],
    tags: [`wave ${i % 5}`],
    fields: [{ key: 'City', value: CITIES[i % CITIES.length] }],
    kpis: { ltv: 1 },
  });
  const create = () => ({ email: `new${creates++}-${f.run}@bench.example.com`, name: 'New Lead', tags: ['bench'] });
  const event = () => ({ type: 'purchase', leadId: f.contactIds[events++ % n], value: '49.90', url: 'https://shop.example.com/cart?x=1' });
  const items = (item: () => unknown) => () => ({ items: Array.from({ length: BATCH_ITEMS }, item) });
  return [
    {
      name: 'POST /api/leads update',
      kind: 'write',
      path: '/api/leads',
      body: () => update(updates++),
    },
    {
      name: 'POST /api/leads create',
      kind: 'write',
      path: '/api/leads',
      body: create,
    },
    {
      name: 'POST /api/events',
      kind: 'write',
      path: '/api/events',
      body: event,
    },
    {
      name: 'POST /api/campaigns/trigger immediate',
      kind: 'trigger',
      path: '/api/campaigns/trigger',
      body: () => ({ campaignId: f.immediateCampaignId, lead: f.emails[immediate++ % n] }),
    },
    {
      name: 'POST /api/campaigns/trigger delay',
      kind: 'trigger',
      path: '/api/campaigns/trigger',
      body: () => ({ campaignId: f.delayCampaignId, lead: f.emails[delayed++ % n] }),
    },
    // The peers harness's lines (/work/shared/peers): a `lead` object, a new contact written with
    // its send; and a delay trigger on an existing contact whose send is pending (the line above
    // left one per contact), which restarts its timer.
    {
      name: 'POST /api/campaigns/trigger immediate, lead object (new contact)',
      kind: 'trigger',
      path: '/api/campaigns/trigger',
      body: () => ({
        campaignId: f.immediateCampaignId,
        lead: { email: `trig${leadTriggers++}-${f.run}@bench.example.com`, name: 'Trigger Lead' },
      }),
    },
    {
      name: 'POST /api/campaigns/trigger delay, lead object (restart)',
      kind: 'trigger',
      path: '/api/campaigns/trigger',
      body: () => ({ campaignId: f.delayCampaignId, lead: { email: f.emails[restarts++ % n] } }),
    },
    // After the single calls they are compared with: the same items, BATCH_ITEMS a request.
    {
      name: 'POST /api/leads/batch update',
      kind: 'batch',
      path: '/api/leads/batch',
      body: items(() => update(updates++)),
      batch: { items: BATCH_ITEMS, single: 'POST /api/leads update' },
    },
    {
      name: 'POST /api/leads/batch create',
      kind: 'batch',
      path: '/api/leads/batch',
      body: items(create),
      batch: { items: BATCH_ITEMS, single: 'POST /api/leads create' },
    },
    {
      name: 'POST /api/events/batch',
      kind: 'batch',
      path: '/api/events/batch',
      body: items(event),
      batch: { items: BATCH_ITEMS, single: 'POST /api/events' },
    },
  ];
}

/** What the bare echo route gets: the same shape and size as a lead update. */
export const BARE_BODY = {
  email: 'lead0@bench.example.com',
  tags: ['wave 0'],
  fields: [{ key: 'City', value: 'Paris' }],
  kpis: { ltv: 1 },
};
