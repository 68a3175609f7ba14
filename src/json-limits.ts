import { invalid } from './errors.js';

/** Free-form metadata is capped (decisions.md, Limits): 16 KiB of JSON. */
export const METADATA_MAX_BYTES = 16 * 1024;

export function checkMetadataSize(metadata: object, path: string): void {
  if (Buffer.byteLength(JSON.stringify(metadata)) > METADATA_MAX_BYTES) {
    throw invalid(path, `metadata must be at most ${METADATA_MAX_BYTES} bytes of JSON`);
  }
}
