#!/usr/bin/env bash
# Measures kk serve (docs/benchmarks.md, "kk serve"), loopback only and
# bounded in count:
#   1. post -> commit throughput with no model at 100, 1,000 and 10,000
#      notes, GET /content p50/p99 at 1,000 req/s while jobs are written,
#      and POST latency with 1,000 jobs queued (go test benchmarks);
#   2. the real binary's memory: kk serve over a 10,000-note tree, after
#      50 posts and 1,000 reads, peak RSS (VmHWM) and RSS from /proc.
#
#   bash scripts/bench-serve.sh            # everything
#   bash scripts/bench-serve.sh memory     # only the real binary (part 2)
#   KK_BENCH_JOBS=200 bash scripts/bench-serve.sh
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${KK_BENCH_JOBS:-100}
base=${KK_BENCH_DIR:-/tmp/kk-bench-serve}

if [ "${1:-}" != memory ]; then
  echo "## go test benchmarks"
  go test ./internal/serve -run '^$' -bench 'PostCommit' -benchtime "${jobs}x" -timeout 30m | grep -E '^Benchmark'
  go test ./internal/serve -run '^$' -bench 'GetContentUnderWrites' -benchtime 5000x -timeout 10m | grep -E '^Benchmark'
  go test ./internal/serve -run '^$' -bench 'PostQueued' -benchtime 500x -timeout 10m | grep -E '^Benchmark'
fi

echo "## memory of kk serve over 10,000 notes"
mkdir -p bin
go build -o bin/kk ./cmd/kk
go build -o bin/kk-gentree ./cmd/kk-gentree
kk="$PWD/bin/kk"
root="$base/10000"
rm -rf "$root"
bin/kk-gentree -n 10000 -seed 1 "$root" >/dev/null
(
  cd "$root"
  git init -q -b main
  # No automatic repack in the background of the measurement.
  git config gc.auto 0
  git config maintenance.auto false
  "$kk" init --no-git-hooks >/dev/null 2>&1
  "$kk" index rebuild >/dev/null 2>&1
  git add -A
  git -c user.name=bench -c user.email=bench@kk.invalid commit -qm "generated tree"
)
"$kk" serve --root "$root" --addr 127.0.0.1:0 --log-level warn 2>"$base/serve.log" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true' EXIT
for _ in $(seq 600); do
  [ -s "$root/.ai/kenkeep/.state/serve.url" ] && break
  sleep 0.1
done
url=$(cat "$root/.ai/kenkeep/.state/serve.url")
for i in $(seq 50); do
  curl -sf -X POST -H "Content-Type: application/json" "$url/content" -d "{\"content\":\"Memory note $i: the release worker retries a deploy job.\",\"title\":\"Memory note $i\"}" >/dev/null
done
for _ in $(seq 1200); do
  curl -sf "$url/healthz" | grep -q '"queue_depth":0,"processing":0' && break
  sleep 0.25
done
leaf=$(cd "$root/.ai/kenkeep/nodes" && find . -name '*.md' ! -name index.md -print -quit)
leaf=${leaf#./}
for _ in $(seq 1000); do
  curl -sf "$url/content?path=$leaf" >/dev/null
done
grep -E '^(VmHWM|VmRSS)' "/proc/$pid/status"
echo "## GET /content under writes, real binary over 10,000 notes, client in another process"
KK_BENCH_URL="$url" KK_BENCH_ROOT="$root" go test ./internal/serve -run '^$' -bench 'GetContentUnderWrites' -benchtime 5000x -timeout 10m | grep -E '^Benchmark'
grep -E '^(VmHWM|VmRSS)' "/proc/$pid/status"
kill -TERM "$pid"
wait "$pid" || true
trap - EXIT
