import { ApiError } from '../../api';
import type { FormErrors } from '../../components/Form';

/**
 * A preview's problems with the form's content come at `/campaign/<member>` (the edits sit
 * under `campaign` in its request): as the save's, they belong on the field. This is the
 * error with those paths made the form's own; the others (`/contactId`, `/data`) are left out.
 */
export function formErrorOfPreview(err: unknown): ApiError | undefined {
  if (!(err instanceof ApiError)) return undefined;
  const details = err.details.filter((d) => d.path.startsWith('/campaign/')).map((d) => ({ ...d, path: d.path.slice('/campaign'.length) }));
  return details.length > 0 ? new ApiError(err.status, err.message, details) : undefined;
}

/** The editor's errors: the last save's, else the last preview's, by path. */
export function mergedErrors(saved: FormErrors, preview: FormErrors): FormErrors {
  return {
    ...saved,
    get: (path) => saved.get(path) ?? preview.get(path),
    under: (path) => saved.under(path) ?? preview.under(path),
  };
}
