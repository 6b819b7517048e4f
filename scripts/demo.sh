#!/usr/bin/env bash
# Builds kk and runs its main job on a small sample repository: create a
# knowledge base, write a few nodes, rebuild the index, lint, and print the
# ENTRY.md an agent session would start from.
set -euo pipefail
cd "$(dirname "$0")/.."

mkdir -p bin
go build -o bin/kk ./cmd/kk
kk="$PWD/bin/kk"

demo=$(mktemp -d "${TMPDIR:-/tmp}/kk-demo.XXXXXX")
echo "# sample repository: $demo" >&2
cd "$demo"
git init -q
mkdir -p internal/httpclient && echo 'package httpclient' > internal/httpclient/client.go

"$kk" init
"$kk" node write map http-client --title "Shared HTTP client" --folder services/http \
  --description "internal/httpclient builds the one HTTP client every service uses" --tag http,clients <<'MD'
`internal/httpclient.New` returns a client with timeouts, retries and tracing
already configured. Services never construct `http.Client` themselves.
MD
"$kk" node write practice "Retry only idempotent requests" --folder services/http \
  --description "Retry GET, PUT and DELETE with backoff; never retry POST" --tag http,reliability \
  --relates-to map-http-client <<'MD'
The shared client retries idempotent methods three times with jittered
backoff. A POST is retried only when the handler takes an idempotency key.
MD
"$kk" node write practice "Wrap errors with context" --folder go \
  --description "Wrap every returned error with the operation and its input" --tag errors,go <<'MD'
Use `fmt.Errorf("reading %s: %w", path, err)`; never return a bare error
from a function that does I/O.
MD
cat > .ai/kenkeep/FOLDER_SUMMARIES.md <<'MD'
---
schema_version: 1
summaries:
  go: Go conventions; read before writing Go code
  services: service code; read before changing a service
  services/http: the shared HTTP client and how to call other services
---
MD
"$kk" index rebuild
"$kk" lint
"$kk" index rebuild --check
echo "----- .ai/kenkeep/ENTRY.md -----"
cat .ai/kenkeep/ENTRY.md
