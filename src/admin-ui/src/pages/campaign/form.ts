import type { CampaignMode, CampaignSchedule, Channel } from '../../../../contract/constants';

/** The campaign form as the user edits it: numbers stay text until sent. */
export interface CampaignForm {
  name: string;
  channel: Channel;
  schedule: CampaignSchedule;
  mode: CampaignMode;
  delaySeconds: string;
  reentry: boolean;
  cooldownDays: string;
  from: string;
  subject: string;
  html: string;
  text: string;
  whatsappTemplate: string;
  language: string;
  whatsappParams: string[];
  webhooks: string[];
}
