#!/usr/bin/env bash
# Installs the system packages kk's tests use from Debian (or Ubuntu)
# packages, only when they are missing:
#   - chromium, for the headless-browser test of the web page (internal/web,
#     TestBrowser*);
#   - graphviz, whose `dot -Tsvg` draws kk graph export's output in tests.
# It is idempotent: with both on PATH it does nothing. It installs only as
# root on a system with apt-get; otherwise it prints a note and exits 0, and
# the tests that need a missing program skip themselves, saying why.
set -euo pipefail

have_chromium() {
  local b
  for b in chromium chromium-browser google-chrome google-chrome-stable headless_shell; do
    command -v "$b" >/dev/null 2>&1 && return 0
  done
  return 1
}
have_dot() { command -v dot >/dev/null 2>&1; }

missing=()
have_chromium || missing+=(chromium)
have_dot || missing+=(graphviz)
if [ ${#missing[@]} = 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "deps-debian: missing ${missing[*]} and no apt-get; install them yourself to run the tests that use them (they skip without)" >&2
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "deps-debian: missing ${missing[*]}; as root run: apt-get install -y ${missing[*]} (the tests that use them skip without)" >&2
  exit 0
fi
echo "deps-debian: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# A fresh container has no package lists; update them once, then install.
if ! apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
fi
have_chromium || { echo "deps-debian: chromium was installed but is not on PATH" >&2; exit 1; }
have_dot || { echo "deps-debian: graphviz was installed but dot is not on PATH" >&2; exit 1; }
