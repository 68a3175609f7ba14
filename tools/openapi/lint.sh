#!/usr/bin/env bash
# Lints the two served OpenAPI documents with Redocly and Spectral (spectral:oas): 0 errors and
# 0 warnings, or this fails. Offline: Redocly's telemetry and update check are off and its
# configuration (redocly.yaml) uses only the built-in rules.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
node --import tsx tools/openapi/write-documents.ts "$out"
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
for doc in public admin; do
  echo "== $doc document: redocly"
  npx --no-install redocly lint --config redocly.yaml --max-problems 50 "$out/$doc.json"
  echo "== $doc document: spectral"
  npx --no-install spectral lint --ruleset .spectral.yaml --fail-severity warn --display-only-failures "$out/$doc.json"
done
