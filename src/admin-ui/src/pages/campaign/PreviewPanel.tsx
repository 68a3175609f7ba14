import { useState } from 'react';
import { Link } from 'react-router';
import type { Channel } from '../../../../contract/constants';
import { ApiError, api, errorMessage } from '../../api';
import { CHANNEL_UI } from '../../channels/registry';
import { ContactPicker } from '../../components/ContactPicker';
import type { ContactSummary, EmailPreview, WhatsappPreview } from '../../types';
import { type CampaignForm, contentOf } from './model';

/** The preview's answer, with the channel it was rendered for (the form may switch channel since). */
type Result = { channel: Channel; preview: EmailPreview | WhatsappPreview };

/**
 * Renders the message (with the unsaved edits) for a chosen contact, and sends a real test
 * message of the saved campaign to that contact.
 */
export function PreviewPanel({ campaignId, form, dirty }: { campaignId: string | undefined; form: CampaignForm; dirty: boolean }) {
  const [contact, setContact] = useState<ContactSummary | null>(null);
  const [result, setResult] = useState<Result | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<'preview' | 'test' | null>(null);
  const [testSent, setTestSent] = useState<string | null>(null);

  if (!campaignId) {
    return (
      <section className="card preview" aria-labelledby="preview-title">
        <h2 id="preview-title">Preview</h2>
        <p className="muted">Save the campaign to preview its message for a contact and send a test.</p>
      </section>
    );
  }

  const preview = async () => {
    if (!contact) return;
    setBusy('preview');
    setError(null);
    setTestSent(null);
    try {
      const answer = await api.post<EmailPreview | WhatsappPreview>(`/campaigns/${encodeURIComponent(campaignId)}/preview`, {
        contactId: contact.id,
        campaign: contentOf(form),
      });
      setResult({ channel: form.channel, preview: answer });
    } catch (err) {
      setError(err);
      setResult(null);
    } finally {
      setBusy(null);
    }
  };

  const testSend = async () => {
    if (!contact) return;
    setBusy('test');
    setError(null);
    setTestSent(null);
    try {
      const answer = await api.post<{ sendId: string }>(`/campaigns/${encodeURIComponent(campaignId)}/test-send`, {
        contactId: contact.id,
      });
      setTestSent(answer.sendId);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };

  const problems = error instanceof ApiError ? error.details : [];
  const PreviewView = result && CHANNEL_UI[result.channel].PreviewView;
  return (
    <section className="card preview" aria-labelledby="preview-title">
      <h2 id="preview-title">Preview and test</h2>
      <ContactPicker
        label="Preview for contact"
        value={contact}
        onChange={(c) => {
          setContact(c);
          setResult(null);
        }}
      />
      <div className="form-actions">
        <button type="button" className="button" onClick={preview} disabled={!contact || busy !== null}>
          {busy === 'preview' ? 'Rendering…' : 'Preview'}
        </button>
        <button type="button" className="button" onClick={testSend} disabled={!contact || busy !== null}>
          {busy === 'test' ? 'Sending…' : 'Send test'}
        </button>
      </div>
      {dirty && <p className="field__hint">The preview shows your unsaved edits; a test send uses the saved campaign.</p>}
      {error !== null && (
        <div className="alert alert--error" role="alert">
          <strong>{errorMessage(error)}</strong>
          {problems.length > 0 && (
            <ul>
              {problems.map((p) => (
                <li key={p.path + p.message}>
                  <code>{p.path.replace(/^\/campaign/, '')}</code>: {p.message}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      {testSent && (
        <p className="alert alert--success" role="status">
          Test message queued ({testSent}). Without an SMTP server it lands in the{' '}
          <Link to={`/outbox?campaignId=${encodeURIComponent(campaignId)}`}>outbox</Link>.
        </p>
      )}
      <div aria-live="polite">{result && PreviewView && <PreviewView preview={result.preview} contact={contact} />}</div>
    </section>
  );
}
