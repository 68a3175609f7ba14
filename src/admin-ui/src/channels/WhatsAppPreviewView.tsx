import type { WhatsappPreview } from '../types';
import type { PreviewViewProps } from './types';

/** A rendered WhatsApp template message in the campaign's preview: template, language, parameters. */
export function WhatsAppPreviewView({ preview: answer }: PreviewViewProps) {
  const preview = answer as WhatsappPreview;
  return (
    <div className="rendered" role="region" aria-label="Rendered WhatsApp message">
      <dl className="rendered__head">
        <dt>Template</dt>
        <dd>
          <code>{preview.template}</code> ({preview.language})
        </dd>
      </dl>
      <ol className="rendered__params">
        {preview.params.map((p, i) => (
          <li key={i}>{p}</li>
        ))}
      </ol>
    </div>
  );
}
