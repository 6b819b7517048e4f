#!/usr/bin/env bash
# A real full disk under a running kk serve (docs/serve.md, "A machine that
# cannot take the writes"): each round mounts a small tmpfs in a user and
# mount namespace of its own (unshare -rm: no root, nothing changed on the
# machine), serves a new knowledge base there, queues jobs behind a held
# index.lock, fills the disk leaving FREE KiB, lets the jobs run into the
# full disk, and frees it. Checked: while full, /healthz says waiting and
# why, reads answer 200, a post is refused 503; once freed, every job is
# done with exactly one commit, the work tree is clean, git fsck passes.
#
#   bash scripts/serve-diskfull.sh              # FREE = 0 24 60 120 250
#   bash scripts/serve-diskfull.sh 8 16 32      # other amounts left free
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in unshare curl git; do
  command -v "$tool" >/dev/null || { echo "serve-diskfull: $tool is needed" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/kk" ./cmd/kk
frees=("$@")
[ ${#frees[@]} -gt 0 ] || frees=(0 24 60 120 250)

cat >"$work/round.sh" <<'EOF'
set -euo pipefail
work=$1 free=$2 port=$3
mnt=$work/mnt
mkdir -p "$mnt"
mount -t tmpfs -o size=8m tmpfs "$mnt"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 HOME=$work
url=http://127.0.0.1:$port
"$work/kk" serve --root "$mnt/kb" --addr "127.0.0.1:$port" >"$work/log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -s -m1 "$url/healthz" | grep -q '"ok"' && break; sleep 0.1; done
post() { curl -s -m5 -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -X POST "$url/content" -d "{\"title\":\"$1\",\"content\":\"$2\"}"; }
bad=0
for i in 1 2 3; do [ "$(post "warm $i" "about go channels $i")" = 202 ] || bad=1; done
sleep 1
touch -d '1 minute ago' "$mnt/kb/.git/index.lock"
sleep 1.5
for i in $(seq 6); do [ "$(post "held $i" "$(head -c 3000 /dev/urandom | base64 -w0)")" = 202 ] || bad=1; done
dd if=/dev/zero of="$mnt/fill" bs=1k 2>/dev/null || true
[ "$free" = 0 ] || truncate -s "-${free}k" "$mnt/fill"
rm -f "$mnt/kb/.git/index.lock"
sleep 4
health=$(curl -s "$url/healthz")
read_code=$(curl -s -o /dev/null -w '%{http_code}' "$url/content?path=inbox/map-warm-1.md")
post_code=$(post "while full" "x")
rm -f "$mnt/fill"
for _ in $(seq 100); do curl -s "$url/healthz" | grep -q '"queue_depth":0,"processing":0' && break; sleep 0.2; done
kill -TERM "$pid"; wait "$pid" || true
cd "$mnt/kb"
jobs=$(grep -l '"status":"done"' .ai/kenkeep/.state/queue/*.json | wc -l)
notdone=$(grep -L '"status":"done"' .ai/kenkeep/.state/queue/*.json | wc -l)
commits=$(git log --format=%s | grep -c '^store(' || true)
dups=$(git log --format=%s | grep '^store(' | sed 's/:.*//' | sort | uniq -d | wc -l)
status=$(git status --porcelain | wc -l)
fsck=$(git fsck --strict 2>&1 | grep -vc '^dangling' || true)
echo "free=${free}KiB while-full: $(echo "$health" | grep -o '"status":"[a-z]*"') read=$read_code post=$post_code; after: done=$jobs not-done=$notdone store-commits=$commits duplicated=$dups status-lines=$status fsck-problems=$fsck"
if [ "$bad" != 0 ] || [ "$read_code" != 200 ] || [ "$notdone" != 0 ] || [ "$dups" != 0 ] || [ "$status" != 0 ] || [ "$fsck" != 0 ] || [ "$commits" != "$jobs" ]; then
  echo "FAIL (log: $work/log)"; exit 1
fi
EOF

port=19200
fail=0
for free in "${frees[@]}"; do
  port=$((port + 1))
  rm -rf "$work/mnt" "$work/log"
  unshare -rm bash "$work/round.sh" "$work" "$free" "$port" || fail=1
done
exit $fail
