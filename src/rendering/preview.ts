import type { Campaign } from '../modules/campaigns/campaign.js';
import type { ContactProfile } from '../modules/contacts/contacts.service.js';
import type { TriggerData } from './variables.js';

/** Names no send: the preview's unsubscribe link is well-formed and leads nowhere. */
export const PREVIEW_SEND_ID = 'preview';

/** What a channel's preview renders from (the campaign with the form's unsaved edits applied). */
export interface PreviewInput {
  campaign: Campaign;
  contact: ContactProfile;
  unsubscribeUrl: string;
  /** Sample trigger data for `{{ trigger.* }}`; absent: renders empty. */
  trigger?: TriggerData;
}

export interface EmailPreview {
  subject: string;
  html: string | null;
  text: string;
}

export interface WhatsAppPreview {
  template: string;
  language: string;
  params: string[];
}

/** The answer of `POST /campaigns/:id/preview`, one shape per channel (docs/admin-api.md). */
export type MessagePreview = EmailPreview | WhatsAppPreview;
