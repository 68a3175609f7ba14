/**
 * Reading the Cloud API's webhook payload (the `messages` field of a WhatsApp Business
 * Account subscription):
 *
 *   {"object": "whatsapp_business_account", "entry": [{"id": WABA_ID, "changes": [{"field": "messages",
 *     "value": {"metadata": {"phone_number_id": ...}, "statuses": [...], "messages": [...]}}]}]}
 *
 * The payload comes from outside: every member is checked for its type and anything unexpected
 * is skipped, never trusted. Meta adds members over time; unknown ones are ignored.
 */

export interface StatusUpdate {
  /** The wamid the send call was answered with (sends.provider_message_id). */
  wamid: string;
  /** sent, delivered, read, failed (others are ignored). */
  status: string;
  /** When Meta saw it (epoch ms), if the payload says. */
  at: number | undefined;
  /** For `failed`: the title of the first error (e.g. "Message undeliverable"). */
  errorTitle: string | undefined;
}

export interface InboundMessage {
  /** The sender's WhatsApp number: digits, country code first. */
  from: string;
  /** What the person wrote or the button they tapped, when it has text. */
  text: string | undefined;
}

/** What one change says about one business phone number (one Herald account). */
export interface PhoneNumberChange {
  phoneNumberId: string;
  statuses: StatusUpdate[];
  messages: InboundMessage[];
}

export function readChanges(payload: unknown): PhoneNumberChange[] {
  const changes: PhoneNumberChange[] = [];
  for (const entry of list(record(payload)?.entry)) {
    for (const change of list(record(entry)?.changes)) {
      const c = record(change);
      if (c?.field !== undefined && c.field !== 'messages') continue;
      const value = record(c?.value);
      const phoneNumberId = text(record(value?.metadata)?.phone_number_id);
      if (!value || phoneNumberId === undefined) continue;
      changes.push({
        phoneNumberId,
        statuses: list(value.statuses)
          .map(readStatus)
          .filter((s): s is StatusUpdate => s !== undefined),
        messages: list(value.messages)
          .map(readMessage)
          .filter((m): m is InboundMessage => m !== undefined),
      });
    }
  }
  return changes;
}

function readStatus(raw: unknown): StatusUpdate | undefined {
  const s = record(raw);
  const wamid = text(s?.id);
  const status = text(s?.status);
  if (!s || wamid === undefined || status === undefined) return undefined;
  // Timestamps are epoch seconds, as a string.
  const seconds = Number(text(s.timestamp) ?? s.timestamp);
  const errorTitle = text(record(list(s.errors)[0])?.title) ?? text(record(list(s.errors)[0])?.message);
  return { wamid, status, at: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined, errorTitle };
}

/**
 * Text of an inbound message: a text message's body, a quick-reply button's text (marketing
 * templates offer a "Stop promotions" button), or an interactive reply's title.
 */
function readMessage(raw: unknown): InboundMessage | undefined {
  const m = record(raw);
  const from = text(m?.from);
  if (!m || from === undefined) return undefined;
  const button = record(m.button);
  const reply = record(record(m.interactive)?.button_reply);
  return { from, text: text(record(m.text)?.body) ?? text(button?.text) ?? text(button?.payload) ?? text(reply?.title) };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
