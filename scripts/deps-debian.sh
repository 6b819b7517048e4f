#!/usr/bin/env bash
# Installs the system packages kk's tests use from Debian (or Ubuntu)
# packages, only when they are missing: chromium, for the headless-browser
# test of the `kk browse` page (internal/web, TestBrowser*). It is
# idempotent: with chromium on PATH it does nothing. It installs only as
# root on a system with apt-get; otherwise it prints a note and exits 0,
# and the browser test skips itself with a message saying why.
set -euo pipefail

have_chromium() {
  local b
  for b in chromium chromium-browser google-chrome google-chrome-stable headless_shell; do
    command -v "$b" >/dev/null 2>&1 && return 0
  done
  return 1
}

if have_chromium; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "deps-debian: no chromium and no apt-get; install Chromium yourself to run the browser test (it skips without it)" >&2
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "deps-debian: no chromium; as root run: apt-get install -y chromium (the browser test skips without it)" >&2
  exit 0
fi
echo "deps-debian: installing chromium" >&2
export DEBIAN_FRONTEND=noninteractive
# A fresh container has no package lists; update them once, then install.
if ! apt-get install -y --no-install-recommends chromium >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  apt-get install -y --no-install-recommends chromium >/dev/null
fi
have_chromium || { echo "deps-debian: chromium was installed but is not on PATH" >&2; exit 1; }
