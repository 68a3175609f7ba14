import assert from 'node:assert/strict';
import { listOutbox, type OutboxItem } from '../../src/channels/transports.js';
import type { CampaignInput } from '../../src/modules/campaigns/campaigns.service.js';
import { campaignStats } from '../../src/modules/campaigns/campaigns.service.js';
import { apiClient } from '../helpers/app.js';
import { makeTenant, randomEmail } from '../helpers/factories.js';
import { freePort, startService } from '../helpers/harness.js';
import { eventually, makeEmailCampaign, type TestHerald } from '../helpers/herald.js';

export { freePort } from '../helpers/harness.js';

export interface RunningHerald extends TestHerald {
  /** http://127.0.0.1:PORT: also PUBLIC_URL, so the links in messages reach this server. */
  base: string;
}

/** The whole service (API, dispatcher, outbox) listening on a real socket, PUBLIC_URL pointing at it. */
export async function startRunningHerald(env: Record<string, string> = {}): Promise<RunningHerald> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await startService({ env: { PUBLIC_URL: base, PORT: String(port), ...env }, listen: true });
  return Object.assign(t, { base });
}

/** The HTML of the tracked test campaign: links of every kind the rewriting must tell apart. */
export const TRACKED_HTML = `<html><body>
<p>Hi {{ contact.name }}</p>
<p><a href="https://shop.example.com/offer?utm_source=herald&amp;id={{ contact.id }}#top">Our offer</a></p>
<p><a class="cta" href='http://blog.example.com/post'>Blog</a> <a href="mailto:help@example.com">Mail us</a></p>
<p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>
</body></html>`;

/** A fresh account with an all-scopes key and an active email campaign. */
export async function emailTenant(t: TestHerald, overrides: Partial<CampaignInput> = {}) {
  const tenant = await makeTenant(t.db, t.config);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId, { html: TRACKED_HTML, ...overrides });
  return { ...tenant, campaignId, api: apiClient(t.app, tenant.key) };
}

/** Triggers the campaign for a new contact and waits until its email sits in the outbox. */
export async function deliverEmail(
  t: TestHerald,
  tenant: { accountId: string; campaignId: string; api: ReturnType<typeof apiClient> },
  email = randomEmail(),
) {
  const res = await tenant.api.post('/api/campaigns/trigger', {
    campaignId: tenant.campaignId,
    lead: { email, name: 'Katherine Johnson' },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.status, 'queued');
  const message = await eventually(
    async () =>
      (await listOutbox(t.db, tenant.accountId, { campaignId: tenant.campaignId })).items.find((i) => i.sendId === res.body.sendId),
    5000,
    'the email in the outbox',
  );
  return { sendId: res.body.sendId as string, leadId: res.body.leadId as string, email, message, links: linksOf(message) };
}

/** The addresses a reader's mail client would fetch or follow: pixel, and every href in order. */
export function linksOf(message: OutboxItem) {
  const html = message.html ?? '';
  const hrefs = [...html.matchAll(/href=["']([^"']+)["']/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
  const pixel = /<img src="([^"]+)" width="1" height="1"/.exec(html)?.[1];
  assert.ok(pixel, `the email has an open pixel: ${html}`);
  return { hrefs, pixel, clicks: hrefs.filter((h) => h.includes('/t/c/')) };
}

export const stats = (t: TestHerald, accountId: string, campaignId: string) => campaignStats(t.db, accountId, campaignId);

/** The engagement rows of a send (what statistics and the activity feed read). */
export function engagementsOf(t: TestHerald, sendId: string) {
  return t.db.kysely
    .selectFrom('engagements')
    .select(['kind', 'url'])
    .where('send_id', '=', sendId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** A token with one character changed (the last of the body, or of the signature). */
export function flip(token: string, index: number): string {
  const c = token[index] === 'A' ? 'B' : 'A';
  return token.slice(0, index) + c + token.slice(index + 1);
}
