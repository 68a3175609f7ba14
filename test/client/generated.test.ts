import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { GENERATE_COMMAND, GENERATED_FILE, generateClientTypes } from '../../tools/openapi-client/generate.js';

/** CI fails when a route schema changed and the client's generated types were not regenerated. */
test('the client’s generated types match the OpenAPI document the app serves today', async () => {
  const fresh = await generateClientTypes();
  const committed = readFileSync(GENERATED_FILE, 'utf8');
  assert.ok(
    committed === fresh,
    `client/src/generated/herald-api.ts is stale: the OpenAPI document changed. Run \`${GENERATE_COMMAND}\` and commit the result.`,
  );
});

test('generation is deterministic: two runs give the same text', async () => {
  assert.equal(await generateClientTypes(), await generateClientTypes());
});
