import { MessageFrame } from '../components/MessageFrame';
import type { EmailPreview } from '../types';
import type { PreviewViewProps } from './types';

/** A rendered email in the campaign's preview: subject, the HTML in a sandboxed frame, the text part. */
export function EmailPreviewView({ preview: answer, contact }: PreviewViewProps) {
  const preview = answer as EmailPreview;
  return (
    <div className="rendered" role="region" aria-label="Rendered email">
      <dl className="rendered__head">
        <dt>To</dt>
        <dd>{contact?.email ?? contact?.name}</dd>
        <dt>Subject</dt>
        <dd className="rendered__subject">{preview.subject}</dd>
      </dl>
      {preview.html ? (
        <MessageFrame title="Rendered HTML preview" className="rendered__frame" html={preview.html} />
      ) : (
        <p className="muted">No HTML part.</p>
      )}
      {preview.text && (
        <details>
          <summary>Plain-text part</summary>
          <pre className="rendered__text">{preview.text}</pre>
        </details>
      )}
    </div>
  );
}
