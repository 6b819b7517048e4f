#!/usr/bin/env bash
# Regenerates docs/browse.png, the screenshot of the kk browse page in
# README.md and docs/browse.md: it builds kk, serves a copy of the worked
# example repository (internal/cli/testdata/example) with `kk browse`, and
# has headless Chromium photograph one page (PAGE, default the node page of
# req-3, which shows a leaf, its edges and its neighbourhood picture).
# Needs Go and Chromium (bash scripts/deps-debian.sh installs it on Debian).
set -euo pipefail
cd "$(dirname "$0")/.."

page=${PAGE:-node/req-3}
out=${OUT:-docs/browse.png}
size=${SIZE:-1200,860}

chrome=${KK_CHROMIUM:-}
if [ -z "$chrome" ]; then
  for b in chromium chromium-browser google-chrome google-chrome-stable chrome; do
    if command -v "$b" >/dev/null 2>&1; then chrome=$(command -v "$b"); break; fi
  done
fi
[ -n "$chrome" ] || { echo "screenshot: no Chromium found; run scripts/deps-debian.sh or set KK_CHROMIUM" >&2; exit 1; }

work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/kk" ./cmd/kk
cp -R internal/cli/testdata/example "$work/repo"
"$work/kk" --root "$work/repo" browse --quiet >"$work/url" &
pid=$!
for _ in $(seq 100); do
  [ -s "$work/url" ] && break
  sleep 0.1
done
url=$(head -n1 "$work/url")
[ -n "$url" ] || { echo "screenshot: kk browse printed no URL" >&2; exit 1; }

# The user data folder is private to this run, so no profile or cache
# changes the picture.
"$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
  --user-data-dir="$work/profile" --window-size="$size" --screenshot="$work/shot.png" "$url$page" >/dev/null 2>&1
mv "$work/shot.png" "$out"
echo "screenshot: wrote $out ($(wc -c <"$out") bytes) from $url$page"
