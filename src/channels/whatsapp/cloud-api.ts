import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { unsubscribeUrl } from '../../modules/unsubscribe/unsubscribe-token.js';
import { renderWhatsAppMessage } from '../../rendering/whatsapp.js';
import { DeliveryError, type DeliveryReceipt, type DeliveryRequest, type Transport } from '../channel.js';

export const WHATSAPP_TIMEOUT_MS = 10_000;

/**
 * Cloud API error codes that mean "not now" rather than "never": 1 (unknown, possibly a server
 * error), 2 (service temporarily down), 4 (app call rate), 80007 (account rate limit), 130429
 * (throughput), 131000 (something went wrong), 131016 (service unavailable), 131048 (spam rate
 * limit), 131056 (pair rate limit), 133004 (server temporarily unavailable). Everything else
 * with a 4xx status (bad parameter 100, template 132xxx, recipient 131026, token 190 ...) is
 * permanent: sending the same request again gets the same answer.
 */
const TEMPORARY_CODES = new Set([1, 2, 4, 80007, 130429, 131000, 131016, 131048, 131056, 133004]);

interface CloudApiError {
  error?: { message?: string; type?: string; code?: number; error_data?: { details?: string } };
}

/**
 * The WhatsApp Cloud API transport, for a request whose account has a phone number id and an
 * access token. The token goes into the Authorization header only: it is never logged and
 * never part of an error reason.
 */
export function createWhatsAppCloudTransport(
  config: Pick<Config, 'whatsappApiUrl' | 'publicUrl' | 'secret'>,
  logger: Logger,
  options: { timeoutMs?: number } = {},
): Transport {
  const timeoutMs = options.timeoutMs ?? WHATSAPP_TIMEOUT_MS;
  return {
    async deliver(request: DeliveryRequest): Promise<DeliveryReceipt> {
      const account = request.account.whatsapp;
      if (!account) throw new DeliveryError('account has no WhatsApp phone number id and token', false);
      const body = await renderWhatsAppMessage({ ...request, unsubscribeUrl: unsubscribeUrl(config, request.send.id) });
      const url = `${config.whatsappApiUrl}/${encodeURIComponent(account.phoneNumberId)}/messages`;

      let response: Response;
      let text: string;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${account.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
          // Covers the answer's body too: a server that stalls mid-response is also a timeout.
          signal: AbortSignal.timeout(timeoutMs),
        });
        text = await response.text();
      } catch (err) {
        throw networkFailure(err, timeoutMs);
      }

      if (response.ok) {
        const id = parseJson<{ messages?: { id?: unknown }[] }>(text)?.messages?.[0]?.id;
        logger.debug({ sendId: request.send.id, wamid: id }, 'whatsapp message accepted');
        // Accepted is not delivered: the status callback reports delivery later.
        return { providerMessageId: typeof id === 'string' ? id : null, delivered: false };
      }
      throw cloudApiFailure(response.status, parseJson<CloudApiError>(text));
    },
  };
}

export function cloudApiFailure(status: number, body: CloudApiError | undefined): DeliveryError {
  const code = body?.error?.code;
  const message = body?.error?.message ?? `HTTP ${status}`;
  const details = body?.error?.error_data?.details;
  const reason = `WhatsApp API ${status}${code === undefined ? '' : ` error ${code}`}: ${message}${details && details !== message ? ` (${details})` : ''}`;
  const temporary = status >= 500 || status === 429 || (code !== undefined && TEMPORARY_CODES.has(code));
  return new DeliveryError(reason, temporary);
}

function networkFailure(err: unknown, timeoutMs: number): DeliveryError {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') {
    return new DeliveryError(`WhatsApp API did not answer within ${timeoutMs / 1000} s`, true);
  }
  const cause = e.cause?.code ?? e.cause?.message ?? e.message;
  return new DeliveryError(`WhatsApp API unreachable: ${cause}`, true);
}

function parseJson<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}
