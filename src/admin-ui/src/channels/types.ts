import type { ComponentType, ReactNode } from 'react';
import type { Tone } from '../components/Badge';
import type { FormErrors } from '../components/Form';
import type { CampaignForm } from '../pages/campaign/form';
import type { CampaignInput, ContactSummary, EmailPreview, WhatsappPreview } from '../types';

export interface MessageSectionProps {
  form: CampaignForm;
  set: <K extends keyof CampaignForm>(key: K, value: CampaignForm[K]) => void;
  errors: FormErrors;
  /** The Liquid variables hint shown under template fields. */
  variablesHint: ReactNode;
}

export interface PreviewViewProps {
  /** The answer of POST /campaigns/:id/preview for this channel. */
  preview: EmailPreview | WhatsappPreview;
  contact: ContactSummary | null;
}

/** How the panel shows one channel (registry.ts). */
export interface ChannelUi {
  /** The channel's name on badges and in the channel choice. */
  label: string;
  tone: Tone;
  /** A remark after the label in the channel choice. */
  note?: string;
  /** Whether its campaigns have webhooks (the webhook section, the signing secret). */
  webhooks: boolean;
  /** The campaign form's message section. */
  MessageSection: ComponentType<MessageSectionProps>;
  /** The members of the form that make the message, for previewing unsaved edits. */
  content(input: CampaignInput): Partial<CampaignInput>;
  /** How the preview shows the rendered message. */
  PreviewView: ComponentType<PreviewViewProps>;
  /** The title of an outbox message without a subject: in the list, and on its own page. */
  untitled: { list: string; page: string };
  /** The heading of an outbox message's payload. */
  payloadTitle: string;
}
