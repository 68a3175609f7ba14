import type { Fixtures } from '../fixtures.js';

export type Kind = 'write' | 'trigger';

export interface ApiScenario {
  name: string;
  kind: Kind;
  path: string;
  /** The next request's body (called once per request). */
  body: () => unknown;
}

const CITIES = ['Paris', 'Lyon', 'Nantes', 'Lille'];

/** The public API calls under load, in the order they run. Bodies rotate over the pre-made contacts. */
export function apiScenarios(f: Fixtures): ApiScenario[] {
  const n = f.emails.length;
  let updates = 0;
  let creates = 0;
  let events = 0;
  let immediate = 0;
  let delayed = 0;
  return [
    {
      name: 'POST /api/leads update',
      kind: 'write',
      path: '/api/leads',
      body: () => {
        const i = updates++;
        return {
          email: f.emails[i % n],
          tags: [`wave ${i % 5}`],
          fields: [{ key: 'City', value: CITIES[i % CITIES.length] }],
          kpis: { ltv: 1 },
        };
      },
    },
    {
      name: 'POST /api/leads create',
      kind: 'write',
      path: '/api/leads',
      body: () => ({ email: `new${creates++}-${f.run}@bench.example.com`, name: 'New Lead', tags: ['bench'] }),
    },
    {
      name: 'POST /api/events',
      kind: 'write',
      path: '/api/events',
      body: () => ({ type: 'purchase', leadId: f.contactIds[events++ % n], value: '49.90', url: 'https://shop.example.com/cart?x=1' }),
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
  ];
}

/** What the bare echo route gets: the same shape and size as a lead update. */
export const BARE_BODY = {
  email: 'lead0@bench.example.com',
  tags: ['wave 0'],
  fields: [{ key: 'City', value: 'Paris' }],
  kpis: { ltv: 1 },
};
