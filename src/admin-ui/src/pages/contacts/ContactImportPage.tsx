import Papa from 'papaparse';
import { useMemo, useState } from 'react';
import { Link } from 'react-router';
import type { ContactImportResults } from '../../../../contract/admin/contact-csv';
import { api, errorMessage } from '../../api';
import { PageHeader } from '../../components/PageHeader';
import { useApi } from '../../hooks';
import type { CustomField, Kpi } from '../../types';
import { detectTarget, problemsOf, type RowProblem, rowToLead, type Target, targetKey, targetOf } from './csv-mapping';

/** Rows per request: well under the server's 1,000, so the progress bar moves on large files. */
const CHUNK = 500;
const PREVIEW_ROWS = 5;
/** Problems listed on screen; the summary counts them all. */
const SHOWN_PROBLEMS = 200;

type Row = Record<string, string | undefined>;
interface Parsed {
  fileName: string;
  headers: string[];
  rows: Row[];
}
interface Run {
  dryRun: boolean;
  done: number;
  total: number;
  created: number;
  updated: number;
  failed: number;
  problems: RowProblem[];
  finished: boolean;
  error?: string;
}

/**
 * The CSV import: the browser reads the file (papaparse), the user checks the column mapping
 * guessed from the headers, then the rows go to the server in chunks of CHUNK, each row
 * written as `POST /api/leads` writes it. "Check" runs the same with nothing kept (dryRun).
 * The file never leaves the browser whole and nothing of it is stored but the contacts.
 */
export function ContactImportPage() {
  const fields = useApi<{ items: CustomField[] }>('/fields');
  const kpis = useApi<{ items: Kpi[] }>('/kpis');
  const [parsed, setParsed] = useState<Parsed>();
  const [parseError, setParseError] = useState<string>();
  const [mapping, setMapping] = useState<Record<string, Target>>({});
  const [run, setRun] = useState<Run>();
  const running = run !== undefined && !run.finished;

  const choose = (file: File | undefined) => {
    setParsed(undefined);
    setRun(undefined);
    setParseError(undefined);
    if (!file) return;
    Papa.parse<Row>(file, {
      header: true,
      skipEmptyLines: 'greedy',
      complete: (result) => {
        const headers = (result.meta.fields ?? []).filter((h) => h.trim() !== '');
        if (headers.length === 0 || result.data.length === 0) {
          setParseError('The file has no rows under a header line.');
          return;
        }
        const detected: Record<string, Target> = {};
        for (const h of headers) detected[h] = detectTarget(h, fields.data?.items ?? [], kpis.data?.items ?? []);
        setMapping(detected);
        setParsed({ fileName: file.name, headers, rows: result.data });
      },
      error: (err) => setParseError(`The file cannot be read: ${err.message}`),
    });
  };

  const leads = useMemo(() => (parsed ? parsed.rows.map((row) => rowToLead(row, mapping)) : []), [parsed, mapping]);

  const start = async (dryRun: boolean) => {
    if (!parsed) return;
    const state: Run = { dryRun, done: 0, total: leads.length, created: 0, updated: 0, failed: 0, problems: [], finished: false };
    setRun({ ...state });
    for (let start = 0; start < leads.length; start += CHUNK) {
      try {
        const { results } = await api.post<ContactImportResults>('/contacts/import', { dryRun, items: leads.slice(start, start + CHUNK) });
        results.forEach((result, i) => {
          // Row 1 is the header line.
          state.problems.push(...problemsOf(start + i + 2, result));
          if (result.status !== 200) state.failed++;
          else if ((result.body as { created?: boolean }).created) state.created++;
          else state.updated++;
        });
      } catch (err) {
        state.error = `Rows ${start + 2} and after were not sent: ${errorMessage(err)}`;
        break;
      }
      state.done = Math.min(leads.length, start + CHUNK);
      setRun({ ...state, problems: [...state.problems] });
    }
    setRun({ ...state, problems: [...state.problems], finished: true });
  };

  const mapped = Object.values(mapping).some((t) => t.kind !== 'ignore');
  return (
    <>
      <Link to="/contacts" className="back-link">
        ← Contacts
      </Link>
      <PageHeader
        title="Import contacts"
        description="A CSV file with a header line. Each row is written as POST /api/leads writes it: found by id, email or phone and updated, or created (then a name and an email or phone are needed)."
      />
      <section className="card stack" aria-labelledby="import-file">
        <h2 id="import-file" className="subhead">
          1. File
        </h2>
        <div className="field">
          <label htmlFor="import-csv">CSV file</label>
          <input
            id="import-csv"
            type="file"
            accept=".csv,text/csv"
            disabled={running || fields.loading || kpis.loading}
            onChange={(e) => choose(e.target.files?.[0])}
          />
        </div>
        {parseError && (
          <p className="alert alert--error" role="alert">
            {parseError}
          </p>
        )}
      </section>

      {parsed && (
        <section className="card stack" aria-labelledby="import-mapping">
          <h2 id="import-mapping" className="subhead">
            2. Columns
          </h2>
          <p className="muted">
            {parsed.rows.length} {parsed.rows.length === 1 ? 'row' : 'rows'} in {parsed.fileName}. Empty cells are left out: an import never
            clears a value. Tags: several in one cell, separated by commas.
          </p>
          <div className="table-wrap table-wrap--scroll">
            <table className="table table--compact">
              <caption className="visually-hidden">Column mapping and the first rows</caption>
              <thead>
                <tr>
                  {parsed.headers.map((h) => (
                    <th key={h} scope="col">
                      <span className="import-header">{h}</span>
                      <select
                        aria-label={`Column ${h}`}
                        value={targetKey(mapping[h] ?? { kind: 'ignore' })}
                        disabled={running}
                        onChange={(e) => setMapping({ ...mapping, [h]: targetOf(e.target.value) })}
                      >
                        <option value="ignore">Ignore</option>
                        <option value="email">Email</option>
                        <option value="phone">Phone</option>
                        <option value="name">Name</option>
                        <option value="tags">Tags</option>
                        <option value="id">Contact id</option>
                        {(fields.data?.items ?? []).map((f) => (
                          <option key={f.name} value={`field:${f.name}`}>
                            Field: {f.name}
                          </option>
                        ))}
                        {(kpis.data?.items ?? []).map((k) => (
                          <option key={k.id} value={`kpi:${k.id}`}>
                            KPI: {k.name}
                          </option>
                        ))}
                      </select>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {parsed.rows.slice(0, PREVIEW_ROWS).map((row, i) => (
                  <tr key={i}>
                    {parsed.headers.map((h) => (
                      <td key={h}>{row[h]}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div className="form-actions">
            <button type="button" className="button" disabled={running || !mapped} onClick={() => void start(true)}>
              Check rows
            </button>
            <button type="button" className="button button--primary" disabled={running || !mapped} onClick={() => void start(false)}>
              Import {parsed.rows.length} {parsed.rows.length === 1 ? 'row' : 'rows'}
            </button>
          </div>
        </section>
      )}

      {run && <ImportReport run={run} />}
    </>
  );
}

function ImportReport({ run }: { run: Run }) {
  const errors = run.problems.filter((p) => p.kind === 'error');
  const failedRows = run.failed;
  const what = run.dryRun ? 'Check' : 'Import';
  return (
    <section className="card stack" aria-labelledby="import-report">
      <h2 id="import-report" className="subhead">
        3. {run.dryRun ? 'Check (nothing is kept)' : 'Import'}
      </h2>
      <label htmlFor="import-progress">
        {run.finished ? `${what} finished` : `${what} in progress`}: {run.done} of {run.total} rows
      </label>
      <progress id="import-progress" max={run.total} value={run.done} />
      <p role="status">
        {run.dryRun ? 'Would create' : 'Created'} {run.created}, {run.dryRun ? 'would update' : 'updated'} {run.updated},{' '}
        {failedRows === 1 ? '1 row refused' : `${failedRows} rows refused`}
        {run.problems.length > errors.length ? `, ${run.problems.length - errors.length} warnings` : ''}.
      </p>
      {run.error && (
        <p className="alert alert--error" role="alert">
          {run.error}
        </p>
      )}
      {run.problems.length > 0 && (
        <div className="table-wrap table-wrap--scroll">
          <table className="table table--compact">
            <caption className="visually-hidden">Row errors and warnings</caption>
            <thead>
              <tr>
                <th scope="col">Row</th>
                <th scope="col">Problem</th>
              </tr>
            </thead>
            <tbody>
              {run.problems.slice(0, SHOWN_PROBLEMS).map((p, i) => (
                <tr key={i}>
                  <td className="num">{p.row}</td>
                  <td>
                    {p.kind === 'warning' ? 'Warning: ' : 'Error: '}
                    {p.message}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {run.problems.length > SHOWN_PROBLEMS && <p className="muted">The first {SHOWN_PROBLEMS} problems are listed.</p>}
    </section>
  );
}
