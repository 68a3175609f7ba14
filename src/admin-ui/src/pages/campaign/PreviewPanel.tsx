import { useId, useState } from 'react';
import { Link } from 'react-router';
import type { Channel } from '../../../../contract/constants';
import { ApiError, api, errorMessage } from '../../api';
import { CHANNEL_UI } from '../../channels/registry';
import { ContactPicker } from '../../components/ContactPicker';
import { TextAreaField, TextField } from '../../components/Form';
import { useIsAdmin } from '../../session';
import type { ContactSummary, EmailPreview, WhatsappPreview } from '../../types';
import { formErrorOfPreview } from './field-errors';
import { type CampaignForm, contentOf } from './model';
import { parseSampleData } from './sample-data';

/** The preview's answer, with the channel it was rendered for (the form may switch channel since). */
type Result = { channel: Channel; preview: EmailPreview | WhatsappPreview };

const SAMPLE_PLACEHOLDER = '{\n  "order": "A-42",\n  "total": "19.90"\n}';

/**
 * Renders the message (with the unsaved edits, saved or not) for a chosen contact, with sample
 * trigger data, and sends a real test message of the saved campaign to that contact or, for
 * administrators, to an address of their choice. Problems with the form's content go to the
 * fields (`onFieldErrors`); the others are shown here.
 */
export function PreviewPanel({
  campaignId,
  form,
  dirty,
  sample,
  setSample,
  onFieldErrors,
}: {
  campaignId: string | undefined;
  form: CampaignForm;
  dirty: boolean;
  /** The sample trigger data as typed (JSON). */
  sample: string;
  setSample: (text: string) => void;
  onFieldErrors: (error: ApiError | undefined) => void;
}) {
  const id = useId();
  const isAdmin = useIsAdmin();
  const [contact, setContact] = useState<ContactSummary | null>(null);
  const [result, setResult] = useState<Result | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<'preview' | 'test' | null>(null);
  const [testSent, setTestSent] = useState<{ sendId: string; to: string | null } | null>(null);
  const [to, setTo] = useState('');
  const parsed = parseSampleData(sample);
  const serverDataError = error instanceof ApiError ? error.details.find((d) => d.path.startsWith('/data'))?.message : undefined;
  const sampleError = parsed.ok ? serverDataError : parsed.error;
  const toError = error instanceof ApiError ? error.details.find((d) => d.path === '/to')?.message : undefined;

  const run = async (kind: 'preview' | 'test', call: () => Promise<void>) => {
    if (!contact || !parsed.ok) return;
    setBusy(kind);
    setError(null);
    setTestSent(null);
    try {
      await call();
    } catch (err) {
      setError(err);
      if (kind === 'preview') {
        setResult(null);
        onFieldErrors(formErrorOfPreview(err));
      }
    } finally {
      setBusy(null);
    }
  };

  const preview = () =>
    run('preview', async () => {
      const body = { contactId: contact!.id, campaign: contentOf(form), data: parsed.ok ? parsed.data : undefined };
      // A campaign not saved yet is previewed from the form alone.
      const path = campaignId ? `/campaigns/${encodeURIComponent(campaignId)}/preview` : '/campaigns/preview';
      const answer = await api.post<EmailPreview | WhatsappPreview>(path, body);
      onFieldErrors(undefined);
      setResult({ channel: form.channel, preview: answer });
    });

  const testSend = () =>
    run('test', async () => {
      if (!campaignId) return;
      const address = to.trim();
      const answer = await api.post<{ sendId: string }>(`/campaigns/${encodeURIComponent(campaignId)}/test-send`, {
        contactId: contact!.id,
        ...(address ? { to: address } : {}),
        ...(parsed.ok && parsed.data ? { data: parsed.data } : {}),
      });
      setTestSent({ sendId: answer.sendId, to: address || null });
    });

  // The sample data's and the address's are shown on their fields; the form's also on its fields (onFieldErrors).
  const problems = error instanceof ApiError ? error.details.filter((d) => !d.path.startsWith('/data') && d.path !== '/to') : [];
  const onFields = error instanceof ApiError && error.details.some((d) => d.path.startsWith('/campaign/'));
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
      <TextAreaField
        label="Sample trigger data (JSON)"
        className="field--code"
        rows={4}
        spellCheck={false}
        value={sample}
        placeholder={SAMPLE_PLACEHOLDER}
        onChange={(e) => setSample(e.target.value)}
        error={sampleError}
        hint={
          <>
            Stands for the trigger call's <code>data</code>: <code>{'{{ trigger.order }}'}</code>. Empty: trigger variables render empty.
          </>
        }
      />
      {campaignId && isAdmin && (
        <TextField
          label="Send test to (optional)"
          value={to}
          onChange={(e) => setTo(e.target.value)}
          error={toError}
          autoComplete="off"
          placeholder={form.channel === 'email' ? 'you@example.com' : '+14155550100'}
          hint="Another address than the contact's; the message is made with the contact's data and marked as a test."
        />
      )}
      <div className="form-actions">
        <button type="button" className="button" onClick={preview} disabled={!contact || !parsed.ok || busy !== null}>
          {busy === 'preview' ? 'Rendering…' : 'Preview'}
        </button>
        <button
          type="button"
          className="button"
          onClick={testSend}
          disabled={!campaignId || !contact || !parsed.ok || busy !== null}
          aria-describedby={campaignId ? undefined : `${id}-unsaved`}
        >
          {busy === 'test' ? 'Sending…' : 'Send test'}
        </button>
      </div>
      {!campaignId && (
        <p className="field__hint" id={`${id}-unsaved`}>
          The preview works before the first save; save the campaign to send a test.
        </p>
      )}
      {campaignId && dirty && <p className="field__hint">The preview shows your unsaved edits; a test send uses the saved campaign.</p>}
      {error !== null && (problems.length > 0 || onFields || !(error instanceof ApiError) || error.details.length === 0) && (
        <div className="alert alert--error" role="alert">
          <strong>{onFields ? 'The message has errors (shown on their fields too):' : errorMessage(error)}</strong>
          {problems.length > 0 && (
            <ul>
              {problems.map((p) => (
                <li key={p.path + p.message}>{p.message}</li>
              ))}
            </ul>
          )}
        </div>
      )}
      {testSent && campaignId && (
        <p className="alert alert--success" role="status">
          Test message queued ({testSent.sendId}){testSent.to ? ` to ${testSent.to}` : ''}, marked as a test. Without an SMTP server it
          lands in the <Link to={`/outbox?campaignId=${encodeURIComponent(campaignId)}`}>outbox</Link>.
        </p>
      )}
      <div aria-live="polite">{result && PreviewView && <PreviewView preview={result.preview} contact={contact} />}</div>
    </section>
  );
}
