#!/usr/bin/env bash
# The prompt-context hook on a busy machine: does the block it injects
# list what `kk search` lists first, when the cores are saturated by other
# work? For PROMPTS leaves of a synthetic tree (every 97th leaf), the
# prompt names the leaf's title as a developer would ask about it. `kk
# search` (quiet machine) gives the reference top 5; then LOAD busy loops
# start and the hook runs once per prompt. Printed: how many blocks list
# the same leaves in the same order as kk search's top 5, how many at
# least list its first hit, how many are empty, the hook's p50/p90 wall
# time, and the load average. The busy loops are this script's own and
# end with it.
#
#   bash scripts/bench-hook-busy.sh                 # 10000 leaves, 40 prompts, 8 loops
#   bash scripts/bench-hook-busy.sh 100000 40 8
#   KK_BENCH_KK=/tmp/kk-old bash scripts/bench-hook-busy.sh   # another kk binary
set -uo pipefail
cd "$(dirname "$0")/.."
size=${1:-10000}
prompts=${2:-40}
load=${3:-8}
base=${KK_BENCH_DIR:-/tmp/kk-bench}
mkdir -p bin "$base"
go build -o bin/kk ./cmd/kk
go build -o bin/kk-gentree ./cmd/kk-gentree
kk=${KK_BENCH_KK:-$PWD/bin/kk}
dir="$base/busy-$size"
if [ ! -f "$dir/.ai/kenkeep/.state/installed-version" ]; then
  rm -rf "$dir"
  bin/kk-gentree -n "$size" -seed 1 "$dir" >/dev/null
  git -C "$dir" init -q -b main
fi
cd "$dir"
"$kk" index rebuild >/dev/null 2>&1
sleep 2.2
work=$(mktemp -d)
loops=()
cleanup() {
  for p in "${loops[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

# The prompts and kk search's reference answers, on the quiet machine.
find .ai/kenkeep/nodes -name '*.md' ! -name index.md | sort | awk -v n="$prompts" 'NR % 97 == 0 && c < n {print; c++}' >"$work/leaves"
i=0
while read -r leaf; do
  title=$(sed -n 's/^title: //p' "$leaf" | head -1)
  q="how does the $title work, and what should I watch for when I change it?"
  printf '%s\n' "$q" >"$work/q$i"
  "$kk" search --limit 5 "$q" 2>/dev/null | awk -F'\t' '/^[0-9]/ {print $3}' >"$work/want$i"
  i=$((i + 1))
done <"$work/leaves"
n=$i

for _ in $(seq "$load"); do
  (while :; do :; done) &
  loops+=($!)
done
sleep 3
same=0 first=0 empty=0
times=()
for i in $(seq 0 $((n - 1))); do
  q=$(cat "$work/q$i")
  payload=$(printf '{"session_id":"0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f","hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"%s"}' "$PWD" "$q")
  s=$(date +%s%N)
  printf '%s' "$payload" | "$kk" hook prompt-context --harness claude >"$work/out$i" 2>/dev/null
  e=$(date +%s%N)
  times+=($(((e - s) / 1000000)))
  # The block lists "- <title> (.ai/kenkeep/nodes/<path>)…" per hit.
  grep -o '(\.ai/kenkeep/nodes/[^)]*)' "$work/out$i" | sed 's/^(\.ai\/kenkeep\/nodes\///; s/)$//' >"$work/got$i"
  [ -s "$work/got$i" ] || empty=$((empty + 1))
  cmp -s "$work/got$i" "$work/want$i" && same=$((same + 1))
  [ "$(head -1 "$work/got$i")" = "$(head -1 "$work/want$i")" ] && [ -s "$work/want$i" ] && first=$((first + 1))
done
loadavg=$(cut -d' ' -f1 /proc/loadavg)
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
p50=$(awk -v n="$n" 'NR==int((n+1)/2)' <<<"$sorted")
p90=$(awk -v n="$n" 'NR==int(n*9/10+0.999)' <<<"$sorted")
echo "| leaves | prompts | busy loops | load | same top 5 as kk search | same first hit | empty | hook p50 | hook p90 |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
printf '| %s | %s | %s | %s | %s (%s%%) | %s | %s | %s ms | %s ms |\n' "$size" "$n" "$load" "$loadavg" "$same" "$((100 * same / n))" "$first" "$empty" "$p50" "$p90"
