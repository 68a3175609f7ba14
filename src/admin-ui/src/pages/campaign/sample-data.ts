/**
 * The sample trigger data of the preview and test send (`{{ trigger.* }}`): typed as JSON in
 * the panel, sent as the API's `data`. Checked here only for shape, so the field can say what
 * is wrong at once; the limits (16 KiB, 32 levels) are the API's, shown at `/data`.
 */
export type SampleData = { ok: true; data: Record<string, unknown> | undefined } | { ok: false; error: string };

export function parseSampleData(text: string): SampleData {
  if (text.trim() === '') return { ok: true, data: undefined };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `Sample trigger data is not valid JSON: ${(err as Error).message}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, error: 'Sample trigger data must be a JSON object, e.g. {"order": "A-42"}' };
  }
  return { ok: true, data: value as Record<string, unknown> };
}

/** `trigger.a`, `trigger.a.b` …: the sample's keys as Liquid paths (objects two levels deep), for the variable picker. */
export function triggerPaths(data: Record<string, unknown> | undefined): string[] {
  const paths: string[] = [];
  const walk = (value: Record<string, unknown>, prefix: string, depth: number) => {
    for (const [key, inner] of Object.entries(value)) {
      const path = `${prefix}${liquidKey(key)}`;
      if (inner && typeof inner === 'object' && !Array.isArray(inner) && depth < 2) walk(inner as Record<string, unknown>, path, depth + 1);
      else paths.push(path);
    }
  };
  if (data) walk(data, 'trigger', 0);
  return paths;
}

/** `.name` for a plain name, `["a b"]` for any other (Liquid's two ways to read a member). */
export function liquidKey(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
