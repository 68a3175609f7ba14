import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import * as foundation from './migrations/0001_foundation.js';
import * as campaigns from './migrations/0002_campaigns.js';
import * as engagement from './migrations/0003_engagement.js';
import * as admin from './migrations/0004_admin.js';
import * as whatsappCallbacks from './migrations/0005_whatsapp_callbacks.js';
import * as adminIndexes from './migrations/0006_admin_indexes.js';
import * as kpiMicros from './migrations/0007_kpi_micros.js';
import * as loginThrottle from './migrations/0008_login_throttle.js';
import * as idempotencyKeys from './migrations/0009_idempotency_keys.js';
import * as triggerData from './migrations/0010_trigger_data.js';
import * as bounces from './migrations/0011_bounces.js';
import * as erasableContacts from './migrations/0012_erasable_contacts.js';
import * as campaignDeletedAt from './migrations/0013_campaign_deleted_at.js';
import * as contactSearchTrigrams from './migrations/0014_contact_search_trigrams.js';
import * as segmentGroups from './migrations/0015_segment_groups.js';
import * as authoring from './migrations/0016_authoring.js';
import * as contactVersion from './migrations/0017_contact_version.js';
import * as accountAllowanceVersion from './migrations/0018_account_allowance_version.js';
import * as segmentValueIndexes from './migrations/0019_segment_value_indexes.js';
import * as sendsProviderMessagePartial from './migrations/0020_sends_provider_message_partial.js';
import * as contactsAccountCreatedDropped from './migrations/0021_contacts_account_created_dropped.js';
import * as hotParentKeysDropped from './migrations/0022_hot_parent_keys_dropped.js';
import * as sendsCounted from './migrations/0023_sends_counted.js';
import * as sendsWakeAt from './migrations/0024_sends_wake_at.js';
import * as webhookDeliveriesDueId from './migrations/0025_webhook_deliveries_due_id.js';
import type { Database } from './schema.js';

/** Migrations are listed in code, so the compiled build and the test runner find the same set. */
export const MIGRATIONS: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_campaigns': campaigns,
  '0003_engagement': engagement,
  '0004_admin': admin,
  '0005_whatsapp_callbacks': whatsappCallbacks,
  '0006_admin_indexes': adminIndexes,
  '0007_kpi_micros': kpiMicros,
  '0008_login_throttle': loginThrottle,
  '0009_idempotency_keys': idempotencyKeys,
  '0010_trigger_data': triggerData,
  '0011_bounces': bounces,
  '0012_erasable_contacts': erasableContacts,
  '0013_campaign_deleted_at': campaignDeletedAt,
  '0014_contact_search_trigrams': contactSearchTrigrams,
  '0015_segment_groups': segmentGroups,
  '0016_authoring': authoring,
  '0017_contact_version': contactVersion,
  '0018_account_allowance_version': accountAllowanceVersion,
  '0019_segment_value_indexes': segmentValueIndexes,
  '0020_sends_provider_message_partial': sendsProviderMessagePartial,
  '0021_contacts_account_created_dropped': contactsAccountCreatedDropped,
  '0022_hot_parent_keys_dropped': hotParentKeysDropped,
  '0023_sends_counted': sendsCounted,
  '0024_sends_wake_at': sendsWakeAt,
  '0025_webhook_deliveries_due_id': webhookDeliveriesDueId,
};

/** Every migration this build applies, in order (readiness checks the database has them all). */
export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS);

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** Idempotent and safe to run from several processes at once (Kysely takes a lock). */
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`, { cause: error });
  }
}

/** The names of the migrations the database has applied (readiness: is it migrated?). */
export async function appliedMigrations(db: Kysely<Database>): Promise<Set<string>> {
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  return new Set(rows.map((r) => r.name));
}
