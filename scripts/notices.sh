#!/usr/bin/env bash
# Writes THIRD_PARTY_NOTICES.md into a folder (default: notices): the
# licence texts of Go and of every Go module compiled into kk on any
# released system, from go.mod and the module sources (cmd/kk-notices).
# GoReleaser runs it as a before hook, so that every archive carries it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-notices}
mkdir -p "$out"
go run ./cmd/kk-notices >"$out/THIRD_PARTY_NOTICES.md"
