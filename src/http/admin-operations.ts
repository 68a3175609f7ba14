import type { DeclaredError } from './operation-docs.js';

/**
 * What the admin document says of each admin route beyond its schemas (docs/admin-api.md): a
 * summary, a description, and the error codes the route itself can answer. The errors every
 * route shares follow from how it is registered (admin-openapi.ts, baseErrors): a session
 * (Not signed in), CSRF on writes, Administrators only, the body and query checks.
 * A route may instead declare all of it in its schema with `documented()` (operation-docs.ts).
 */
export interface AdminOperation {
  summary: string;
  description: string;
  errors?: DeclaredError[];
}

const conflict = (message: string): DeclaredError => ({ code: 'CONFLICT', message });

/** Keyed `METHOD /path` below the /admin/api prefix, with `{name}` parameters. */
export const ADMIN_OPERATIONS: Record<string, AdminOperation> = {
  'POST /login': {
    summary: 'Sign in',
    description:
      'Checks the email and password, sets the `herald_session` cookie and answers the session with its CSRF token. ' +
      'After 5 failures for one email or one address within 15 minutes: 429 with Retry-After.',
    errors: ['INVALID_CREDENTIALS', 'LOGIN_THROTTLED'],
  },
  'POST /logout': { summary: 'Sign out', description: 'Deletes the session; its cookie no longer signs anything in.' },
  'GET /session': {
    summary: 'The current session',
    description: 'The signed-in user, the account and the CSRF token (as sign-in answers).',
  },
  'GET /account': {
    summary: 'The account',
    description:
      "The account's name, plan, monthly allowance and its use, whether WhatsApp is configured, and its unsubscribe page's language and texts.",
    errors: ['ACCOUNT_NOT_FOUND'],
  },
  'PATCH /account': {
    summary: "Configure the account's WhatsApp sender and unsubscribe page",
    description:
      'Sets the WhatsApp Cloud API phone number id, token and app secret (sealed at rest), and the language and texts of ' +
      "the recipients' unsubscribe page (null or empty: the English default). Administrators only.",
    errors: ['ACCOUNT_NOT_FOUND'],
  },
  'GET /users': { summary: 'List users', description: "The account's users and their roles. Administrators only." },
  'POST /users': {
    summary: 'Invite a user',
    description: 'Creates a user of the account with a first password and a role. Administrators only.',
    errors: [conflict("a user with email 'ann@example.com' already exists")],
  },
  'DELETE /users/{id}': {
    summary: 'Remove a user',
    description: 'Deletes the user and their sessions; one cannot remove oneself (400). Administrators only.',
    errors: ['USER_NOT_FOUND'],
  },
  'PATCH /users/{id}': {
    summary: "Change a user's role",
    description:
      'Makes the user an administrator or a member. The account keeps at least one administrator (400 at /role). Administrators only.',
    errors: ['USER_NOT_FOUND'],
  },
  'POST /users/{id}/password': {
    summary: "Set another user's password",
    description:
      'Sets a new password (at least 8 characters) for another user of the account and signs them out everywhere. ' +
      'Not for oneself (400 at /id): use POST /profile/password. Administrators only.',
    errors: ['USER_NOT_FOUND'],
  },
  'POST /profile/password': {
    summary: 'Change your own password',
    description:
      'Needs the current password (400 at /currentPassword when it does not match); the new one has at least 8 characters. ' +
      'Every other session of the user ends; this one stays signed in.',
  },
  'GET /keys': {
    summary: 'List API keys',
    description: "The account's API keys with their scopes and state (never their values). Administrators only.",
  },
  'POST /keys': {
    summary: 'Create an API key',
    description: 'Creates a key with a name, scopes and an optional expiry; the answer carries its value. Administrators only.',
  },
  'GET /keys/{id}/value': {
    summary: "An API key's value",
    description: 'The value of the key, to copy it again. Administrators only.',
    errors: ['KEY_NOT_FOUND'],
  },
  'PATCH /keys/{id}': {
    summary: 'Edit an API key',
    description: 'Renames the key, changes its scopes or expiry, switches it on or off. Administrators only.',
    errors: ['KEY_NOT_FOUND'],
  },
  'DELETE /keys/{id}': {
    summary: 'Delete an API key',
    description: 'The key stops working at once. Administrators only.',
    errors: ['KEY_NOT_FOUND'],
  },
  'GET /fields': { summary: 'List custom fields', description: "The account's custom field definitions: name and type." },
  'POST /fields': {
    summary: 'Define a custom field',
    description: 'A new custom field with its type; the public API writes its values by name.',
    errors: [conflict("a custom field named 'City' already exists")],
  },
  'PATCH /fields/{id}': {
    summary: 'Rename a custom field',
    description:
      'A new name (same rules as on creation; the type never changes). Stored values stay; saved segments naming the field ' +
      'are updated. Templates and API callers use the name: they must use the new one.',
    errors: ['FIELD_NOT_FOUND', conflict("a custom field named 'City' already exists")],
  },
  'DELETE /fields/{id}': {
    summary: 'Delete a custom field',
    description: "Deletes the definition and every contact's value of it. Refused while a saved segment names the field.",
    errors: ['FIELD_NOT_FOUND', conflict("custom field 'City' is used by segment 'Paris': edit or delete it first")],
  },
  'GET /kpis': { summary: 'List KPIs', description: "The account's KPI definitions: id (used by the API) and name." },
  'POST /kpis': {
    summary: 'Define a KPI',
    description: 'A new KPI; the public API adds increments to it by id.',
    errors: [conflict("a KPI with id 'revenue' already exists")],
  },
  'PATCH /kpis/{id}': {
    summary: 'Rename a KPI',
    description: 'A new display name. The id (used by the API, templates and stored totals) never changes.',
    errors: ['KPI_NOT_FOUND'],
  },
  'DELETE /kpis/{id}': {
    summary: 'Delete a KPI',
    description: "Deletes the definition and every contact's total of it; 409 while a saved segment compares it.",
    errors: ['KPI_NOT_FOUND', conflict("KPI 'purchases' is used by segment 'Repeat buyers': edit or delete it first")],
  },
  'GET /campaigns': { summary: 'List campaigns', description: "The account's campaigns with their settings." },
  'POST /campaigns': {
    summary: 'Create a campaign',
    description: 'A new email or WhatsApp campaign; answers its id and its webhook signing secret (shown once).',
    errors: ['ACCOUNT_NOT_FOUND'],
  },
  'GET /campaigns/{id}': { summary: 'A campaign', description: 'The campaign and all its settings.', errors: ['CAMPAIGN_NOT_FOUND'] },
  'PATCH /campaigns/{id}': {
    summary: 'Edit a campaign',
    description:
      'Changes any settings, activates or deactivates it. Activation refusals (incomplete settings, WhatsApp on the free plan) ' +
      'are a Validation Error naming the member.',
    errors: ['CAMPAIGN_NOT_FOUND', 'ACCOUNT_NOT_FOUND'],
  },
  'DELETE /campaigns/{id}': {
    summary: 'Delete a campaign',
    description:
      'The campaign is gone for every operation (a trigger answers Campaign not found). Its sends that had not gone out are ' +
      'cancelled with the reason `campaign deleted`, its waiting webhook deliveries are given up; sent messages, outbox ' +
      "messages and engagements stay in the contacts' history.",
    errors: ['CAMPAIGN_NOT_FOUND', 'ACCOUNT_NOT_FOUND'],
  },
  'POST /campaigns/{id}/duplicate': {
    summary: 'Duplicate a campaign',
    description:
      'A new inactive campaign with the same settings, templates and webhook URLs, named "<name> (copy)" (or "(copy 2)" ...), ' +
      'with its own new webhook signing secret (shown once). Answers the copy.',
    errors: ['CAMPAIGN_NOT_FOUND', 'ACCOUNT_NOT_FOUND'],
  },
  'POST /campaigns/{id}/preview': {
    summary: 'Preview a campaign for a contact',
    description: "The message as that contact would receive it, with the campaign's unsaved edits if sent.",
    errors: ['CAMPAIGN_NOT_FOUND', 'LEAD_NOT_FOUND'],
  },
  'POST /campaigns/preview': {
    summary: 'Preview a campaign not saved yet',
    description:
      "The message a new campaign with this content would make for the contact (a new campaign's defaults, the channel " +
      'required); Liquid errors are a Validation Error at the field, under `/campaign`. Nothing is stored.',
    errors: ['LEAD_NOT_FOUND'],
  },
  'GET /campaigns/{id}/stats': {
    summary: "A campaign's statistics",
    description: 'Totals per recipient result and delivery event, and the same per day over the last `days` days.',
    errors: ['CAMPAIGN_NOT_FOUND', 'ACCOUNT_NOT_FOUND'],
  },
  'POST /campaigns/{id}/test-send': {
    summary: 'Send a test',
    description:
      'A real send to that contact through the campaign channel, outside the trigger rules; not counted anywhere. ' +
      "With `to` it goes to that address instead, rendered with the contact's data (administrators only; 10 at once, " +
      'then 1 every 6 seconds per account: 429 with Retry-After). The email says `[Test]` before its subject.',
    errors: ['CAMPAIGN_NOT_FOUND', 'LEAD_NOT_FOUND', 'ADMIN_ONLY', 'RATE_LIMITED'],
  },
  'GET /campaigns/{id}/webhook-deliveries': {
    summary: "A campaign's webhook deliveries",
    description: 'The latest outbound webhook deliveries of the campaign with their attempts, newest first.',
    errors: ['CAMPAIGN_NOT_FOUND'],
  },
  'GET /contacts': { summary: 'Search contacts', description: 'Contacts by text, tag, archived and opt-out state, one page at a time.' },
  'GET /contacts/count': {
    summary: 'Count contacts',
    description: 'How many contacts match the filters of `GET /contacts` (`q`, `tag`, `archived`, `optedOut`), all pages together.',
  },
  'GET /contacts/export': {
    summary: 'Export contacts as CSV',
    description:
      'The contacts matching the filters of `GET /contacts`, newest first, as a CSV file (streamed; UTF-8 with a byte order mark). ' +
      "Columns: id, name, email, phone, tags, archived, opted_out, created_at. A cell starting with =, +, - or @ gets a ' in front.",
  },
  'POST /contacts/import': {
    summary: 'Import contacts (CSV rows)',
    description:
      'Up to 1,000 `POST /api/leads` bodies (the rows of a CSV file the panel mapped), each written exactly as that call writes it. ' +
      'Answers one result per row: the status and body that call would have answered. With `dryRun` nothing is kept.',
    errors: [{ code: 'VALIDATION', details: [{ path: '/items', message: 'must be a list of 1 to 1000 items' }] }],
  },
  'GET /segments/{id}/export': {
    summary: "Export a segment's contacts as CSV",
    description: 'The contacts matching the segment now, as `GET /contacts/export` writes them.',
    errors: ['SEGMENT_NOT_FOUND'],
  },
  'GET /contacts/{id}': {
    summary: 'A contact',
    description: "The contact's profile: identifiers, tags, fields, KPIs, metadata, notes.",
    errors: ['LEAD_NOT_FOUND'],
  },
  'PATCH /contacts/{id}': {
    summary: 'Archive or opt out a contact',
    description: 'Sets archived and opted-out; answers the profile.',
    errors: ['LEAD_NOT_FOUND'],
  },
  'POST /contacts/{id}/edit': {
    summary: "Edit a contact's name, tags, fields and KPIs",
    description:
      'The write of POST /api/leads on this contact, with its rules; what that route would skip with a warning ' +
      '(unknown field, wrong format, KPI out of range) is a Validation Error here at the same path, and nothing changes.',
    errors: ['LEAD_NOT_FOUND'],
  },
  'DELETE /contacts/{id}': {
    summary: 'Erase a contact (GDPR)',
    description:
      'Removes the contact and everything that names them; their sends and engagements stay as anonymous rows so ' +
      'campaign statistics do not change, and sends still waiting are cancelled (docs/decisions.md, Erasing a contact). ' +
      'Administrators only.',
    errors: ['LEAD_NOT_FOUND'],
  },
  'GET /contacts/{id}/activity': {
    summary: "A contact's activity",
    description: 'Events, sends, notes, opens and clicks of the contact, newest first, one page at a time.',
    errors: ['LEAD_NOT_FOUND'],
  },
  'POST /contacts/{id}/notes': {
    summary: 'Add a note',
    description: 'A note on the contact, signed with the user email.',
    errors: ['LEAD_NOT_FOUND'],
  },
  'GET /segments': { summary: 'List segments', description: "The account's saved segments and their criteria." },
  'POST /segments': {
    summary: 'Save a segment',
    description:
      'A named set of criteria: groups, any of which may hold, each the AND of its events (done or not done), tags, field and KPI comparisons.',
  },
  'PUT /segments/{id}': { summary: 'Edit a segment', description: 'Replaces the name and criteria.', errors: ['SEGMENT_NOT_FOUND'] },
  'DELETE /segments/{id}': {
    summary: 'Delete a segment',
    description: 'The segment is removed; contacts are not touched.',
    errors: ['SEGMENT_NOT_FOUND'],
  },
  'POST /segments/preview': {
    summary: 'Preview criteria',
    description: 'How many contacts match the criteria, and the first page of them.',
  },
  'GET /segments/{id}/contacts': {
    summary: "A segment's contacts",
    description: 'The contacts matching the segment now, one page at a time.',
    errors: ['SEGMENT_NOT_FOUND'],
  },
  'GET /outbox': { summary: 'List outbox messages', description: 'Messages the outbox transport kept instead of sending, newest first.' },
  'GET /outbox/{id}': {
    summary: 'An outbox message',
    description: 'The message with its HTML (untracked: viewing it counts no open), text, headers and payload.',
    errors: ['OUTBOX_MESSAGE_NOT_FOUND'],
  },
  'GET /message-frame': {
    summary: 'The message frame',
    description: "An empty HTML document with the message frame's own Content-Security-Policy, into which the panel writes email HTML.",
  },
};

/** The admin document's tags (the first segment of each path) and what each groups. */
export const ADMIN_TAGS: Record<string, string> = {
  account: "The signed-in user's account: plan, allowance, WhatsApp sender.",
  campaigns: 'Campaigns: settings, activation, previews, test sends, statistics, webhook deliveries.',
  contacts: 'Contacts: search, profile, edit, activity, notes, archive and opt-out, erase.',
  fields: 'Custom field definitions.',
  keys: 'API keys of the public API.',
  kpis: 'KPI definitions.',
  login: 'Signing in: the session cookie and its CSRF token.',
  logout: 'Signing out.',
  'message-frame': 'The frame the panel shows email HTML in.',
  profile: "The signed-in user's own settings: their password.",
  outbox: 'Messages kept by the outbox transport.',
  segments: 'Saved sets of criteria over events, tags, fields and KPIs.',
  session: 'The current session.',
  users: 'Users of the account and their roles.',
};
