import type { Config } from '../../config.js';
import type { Account } from '../../contract/admin/account.js';
import { PLANS, type Plan } from '../../contract/constants.js';
import { deriveKey, encrypt } from '../../crypto.js';
import type { Db } from '../../db/connect.js';
import type { AccountsTable } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError, invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import { deactivateWhatsappCampaigns } from '../campaigns/campaigns.service.js';
import { sendsCountedThisMonth } from '../sends/trigger.service.js';
import { applyPageUpdate, type PageTextsUpdate, pageTextsOf } from '../unsubscribe/page-settings.js';
import * as repo from './accounts.repo.js';
import { verifyTokenHash } from './whatsapp-verify-token.js';

export { PLANS, type Plan };
/** Free accounts get this monthly send allowance unless one is set (decisions.md, Plans). */
export const FREE_DEFAULT_ALLOWANCE = 1000;

export interface AccountInput {
  name: string;
  plan?: Plan;
  allowance?: number | null;
}

export async function createAccount(db: Db, input: AccountInput): Promise<{ id: string }> {
  const name = input.name.trim();
  if (name.length < 1 || name.length > 255) throw invalid('/name', 'name must be 1 to 255 characters');
  const plan = input.plan ?? 'free';
  const allowance = input.allowance !== undefined ? input.allowance : plan === 'free' ? FREE_DEFAULT_ALLOWANCE : null;
  checkAllowance(allowance);
  const id = newId('acc');
  await repo.insertAccount(db, {
    id,
    name,
    plan,
    allowance,
    whatsapp_phone_number_id: null,
    whatsapp_token: null,
    whatsapp_app_secret: null,
    created_at: Date.now(),
  });
  return { id };
}

export interface AccountUpdate {
  plan?: Plan;
  allowance?: number | null;
  whatsapp?: { phoneNumberId: string; token: string; appSecret?: string };
  /** The token Meta's webhook verification handshake must present (GET /whatsapp/webhook). */
  whatsappVerifyToken?: string;
  /** The recipients' unsubscribe page (unsubscribe/page-settings.ts): a member given changes, null or '' resets it. */
  unsubscribePage?: PageTextsUpdate;
}

/** Meta echoes the verify token in a query string: any text up to 255 characters, no control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const VERIFY_TOKEN = /^(?=.*\S)[^\x00-\x1f\x7f]{1,255}$/;

export async function updateAccount(
  db: Db,
  config: Pick<Config, 'secret'>,
  accountId: string,
  update: AccountUpdate,
): Promise<{ id: string }> {
  const account = await getAccount(db, accountId);
  if (update.allowance !== undefined) checkAllowance(update.allowance);
  if (update.whatsappVerifyToken !== undefined && !VERIFY_TOKEN.test(update.whatsappVerifyToken)) {
    throw invalid('/whatsappVerifyToken', 'the verify token must be 1 to 255 characters, without control characters');
  }
  const values: Partial<AccountsTable> = {};
  if (update.unsubscribePage !== undefined) values.unsubscribe_page = applyPageUpdate(account.unsubscribe_page, update.unsubscribePage);
  if (update.plan !== undefined) values.plan = update.plan;
  if (update.allowance !== undefined) values.allowance = update.allowance;
  if (update.whatsapp) {
    const key = deriveKey(config.secret, 'account-secrets');
    values.whatsapp_phone_number_id = update.whatsapp.phoneNumberId;
    values.whatsapp_token = encrypt(key, update.whatsapp.token);
    if (update.whatsapp.appSecret !== undefined) values.whatsapp_app_secret = encrypt(key, update.whatsapp.appSecret);
  }
  if (update.whatsappVerifyToken !== undefined) {
    values.whatsapp_verify_token = encrypt(deriveKey(config.secret, 'account-secrets'), update.whatsappVerifyToken);
    values.whatsapp_verify_token_hash = verifyTokenHash(config, update.whatsappVerifyToken);
  }
  if (Object.keys(values).length === 0) return { id: accountId };
  await inTransaction(db, async (tx) => {
    await repo.updateAccountRow(tx, accountId, values);
    // decisions.md, Plans: a free account cannot send WhatsApp, so dropping to free switches its
    // WhatsApp campaigns off in the same transaction (no moment where one is active on free).
    if (values.plan === 'free') await deactivateWhatsappCampaigns(tx, accountId, Date.now());
  });
  return { id: accountId };
}

export async function getAccount(db: Db, accountId: string): Promise<AccountsTable> {
  const row = await repo.findAccountRow(db, accountId);
  if (!row) throw new AppError('ACCOUNT_NOT_FOUND');
  return row;
}

/** The account page: plan, allowance and this month's use, WhatsApp settings (never the token). */
export async function accountView(db: Db, accountId: string, now = Date.now()): Promise<Account> {
  const account = await getAccount(db, accountId);
  // The same count, over the same UTC calendar month, as the allowance check of a trigger.
  const usedThisMonth = await sendsCountedThisMonth(db, accountId, now);
  return {
    id: account.id,
    name: account.name,
    plan: account.plan,
    allowance: account.allowance,
    usedThisMonth,
    whatsapp: {
      configured: account.whatsapp_phone_number_id !== null && account.whatsapp_token !== null,
      phoneNumberId: account.whatsapp_phone_number_id,
    },
    unsubscribePage: pageTextsOf(account.unsubscribe_page),
  };
}

function checkAllowance(allowance: number | null): void {
  if (allowance !== null && (!Number.isInteger(allowance) || allowance < 0)) {
    throw invalid('/allowance', 'allowance must be a whole number of 0 or more, or none');
  }
}
