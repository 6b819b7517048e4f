#!/usr/bin/env bash
# Times `kk search` and the prompt-context hook as commands on synthetic
# trees and prints a markdown table: median and p90 wall time, and median
# CPU time (user+sys, which other work on the machine inflates far less
# than wall time), over KK_BENCH_RUNS runs (default 21).
#
#   bash scripts/bench-search.sh              # 10000 and 100000 leaves
#   bash scripts/bench-search.sh 10000        # one size
#
# Each size is generated twice by cmd/kk-gentree with a fixed seed:
# "56-word" bodies (every query word is in most leaves: the worst case for
# ranking) and "natural" bodies (a 5,000-word Zipf vocabulary), into
# ${KK_BENCH_DIR:-/tmp/kk-bench}/search-<kind>-<n>, aged an hour and reused.
# Rows: steady state (index current, files older than the 2 s racy window),
# and right after a write (one leaf rewritten before each run, so the sync
# re-reads it and updates the index first). The hook rows count the runs
# that hit the hook's 1 s deadline (logged in _logs/hook-errors-*.log).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
runs=${KK_BENCH_RUNS:-21}
base=${KK_BENCH_DIR:-/tmp/kk-bench}

mkdir -p bin "$base"
go build -o bin/kk ./cmd/kk
go build -o bin/kk-gentree ./cmd/kk-gentree
kk="$PWD/bin/kk"

# stats <setup> <cmd...>: runs setup (untimed) then cmd, $runs times;
# prints "p50_ms p90_ms cpu_p50_ms". cmd reads stdin from $stdin_file.
stdin_file=/dev/null
stats() {
  local setup=$1; shift
  local walls=() cpus=() tmp out
  tmp=$(mktemp)
  for _ in $(seq "$runs"); do
    eval "$setup"
    /usr/bin/time -f '%e %U %S' -o "$tmp" "$@" <"$stdin_file" >/dev/null 2>&1 || true
    out=$(tail -1 "$tmp")
    read -r e u s <<<"$out"
    walls+=("$(awk -v e="$e" 'BEGIN{printf "%d", e*1000}')")
    cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%d", (u+s)*1000}')")
  done
  rm -f "$tmp"
  local w c
  w=$(printf '%s\n' "${walls[@]}" | sort -n)
  c=$(printf '%s\n' "${cpus[@]}" | sort -n)
  printf '%s %s %s\n' \
    "$(awk -v n="$runs" 'NR==int((n+1)/2)' <<<"$w")" \
    "$(awk -v n="$runs" 'NR==int(n*9/10+0.999)' <<<"$w")" \
    "$(awk -v n="$runs" 'NR==int((n+1)/2)' <<<"$c")"
}

settle() { sleep 2.2; }
leaf=""
rewrite() { printf '\nEdited %s.\n' "$RANDOM" >>"$leaf"; }

echo "| tree | command | state | p50 | p90 | CPU p50 | deadline hit |"
echo "| --- | --- | --- | ---: | ---: | ---: | ---: |"
for size in "${sizes[@]}"; do
  for kind in 56-word natural; do
    dir="$base/search-$kind-$size"
    if [ ! -f "$dir/.ai/kenkeep/.state/branches/main/index.db" ]; then
      rm -rf "$dir"
      vocab=()
      [ "$kind" = natural ] && vocab=(-vocabulary 5000)
      bin/kk-gentree -n "$size" -seed 1 "${vocab[@]}" "$dir" >/dev/null
      (cd "$dir" && git init -q -b main && "$kk" sync >/dev/null && find .ai -type f -exec touch -d '1 hour ago' {} +)
    fi
    pushd "$dir" >/dev/null
    leaf=$(find .ai/kenkeep/nodes -name 'practice-*.md' | sort | sed -n 1p)
    saved=$(mktemp)
    cp "$leaf" "$saved"
    "$kk" sync >/dev/null
    settle
    payload=$(mktemp)
    printf '{"session_id":"0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f","hook_event_name":"UserPromptSubmit","prompt":"what is the retry timeout for the queue handler?","cwd":"%s"}' "$PWD" >"$payload"
    rm -f .ai/kenkeep/_logs/hook-errors-*.log
    row() { # label state setup cmd...
      local label=$1 state=$2 setup=$3; shift 3
      read -r p50 p90 cpu < <(stats "$setup" "$@")
      local hit=""
      if [ "$label" = "kk hook prompt-context" ]; then
        hit=$(cat .ai/kenkeep/_logs/hook-errors-*.log 2>/dev/null | grep -c '"phase":"deadline"' || true)
        rm -f .ai/kenkeep/_logs/hook-errors-*.log
      fi
      printf '| %s %s | %s | %s | %s ms | %s ms | %s ms | %s |\n' "$size" "$kind" "$label" "$state" "$p50" "$p90" "$cpu" "$hit"
    }
    stdin_file=/dev/null
    row "kk search cache timeout" steady : "$kk" search cache timeout
    row "kk search … --type practice --tag retry --limit 5" steady : "$kk" search how does the http handler retry a request --type practice --tag retry --limit 5
    stdin_file=$payload
    row "kk hook prompt-context" steady : "$kk" hook prompt-context --harness claude
    row "kk hook prompt-context" "after a write" rewrite "$kk" hook prompt-context --harness claude
    stdin_file=/dev/null
    row "kk search cache timeout" "after a write" rewrite "$kk" search cache timeout
    cp "$saved" "$leaf"
    touch -d '1 hour ago' "$leaf"
    "$kk" sync >/dev/null
    rm -f "$payload" "$saved"
    popd >/dev/null
  done
done
