#!/usr/bin/env bash
# kill -9 of a real kk serve at random points across its jobs' writes and
# commits, many rounds (docs/serve.md, "Crash recovery"): every job
# accepted must end done with exactly one commit or failed with none, the
# server must come back every time, and no lock may be left.
#
#   bash scripts/serve-kill9.sh          # 100 rounds
#   bash scripts/serve-kill9.sh 300      # more
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-100}
KK_SERVE_KILL_ROUNDS="$rounds" go test ./internal/cli -run '^TestServeKill9AcrossTheCommit$' -count=1 -v -timeout 60m \
  | grep -E '^(=== RUN|--- |PASS|FAIL|ok)|seed|rounds:|failed:|lock left|commits'
