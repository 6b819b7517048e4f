#!/usr/bin/env bash
# Runs golangci-lint with .golangci.yml (errcheck, govet, ineffassign,
# staticcheck, unparam, unused; gofmt). The linter is pinned: it is built
# once from the Go module proxy (go install, with the toolchain that builds
# kk) into a cache folder (KK_GOLANGCI_CACHE, default
# ~/.cache/kk/golangci-lint-<version>), and reused after that.
set -euo pipefail
cd "$(dirname "$0")/.."

version=v2.15.0
cache=${KK_GOLANGCI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kk/golangci-lint-$version}
lint=$cache/golangci-lint

if [ ! -x "$lint" ]; then
  echo "lint: installing golangci-lint $version into $cache"
  mkdir -p "$cache"
  GOBIN=$cache GOFLAGS=-mod=mod go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version"
fi
"$lint" run ./...
