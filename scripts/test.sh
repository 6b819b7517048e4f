#!/usr/bin/env bash
# Runs every check and test of kk: formatting, go vet, golangci-lint, and
# the whole test suite under the race detector (unit tests, testscript end-to-end scripts,
# fuzz seed corpora, the schema and CLI-docs drift checks, and the drupal
# pack migration, which needs ../shared/fixtures beside the repository, the
# headless-browser test of the web page and the Graphviz drawings of
# kk graph export, with Chromium and Graphviz from scripts/deps-debian.sh),
# then every fuzz target for a short time (scripts/fuzz.sh; FUZZTIME, 100000
# executions each by default), then the MCP end-to-end test with the MCP Inspector and
# the end-to-end test of kk inside a real harness CLI (Claude Code, from
# npm; the other harnesses run with `bash scripts/e2e-harnesses.sh`).
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
# golangci-lint at its pinned version (.golangci.yml), built once into a
# cache folder.
bash scripts/lint.sh
# Chromium and Graphviz, for the headless-browser test of the web page
# (internal/web TestBrowser) and the dot drawings of kk graph export:
# installed from Debian packages when missing and running as root;
# otherwise a note, and those tests skip themselves.
bash scripts/deps-debian.sh
# internal/searcheval scores the ranking over both public corpora and their
# query sets: hundreds of knowledge bases built and searched in one
# goroutine, whose concurrency (index sync, the hooks) is tested under the
# race detector in its own packages. The detector multiplies its SQLite
# work about twelve times (74 s without, over 15 minutes with, on an idle
# machine), so it runs without it, every test of it.
#
# internal/cli's end-to-end scripts (TestScripts: 250 testscripts, each
# running the kk binary many times) run without the race detector too: under
# it they took about 30 of the run's minutes on a quiet 2-core machine, and
# the concurrency they drive (lock, jobqueue, serve, httpapi, mcpserver,
# the hooks' sync) is tested under the detector in those packages' own
# tests. The package's other tests run under it with the rest.
go test -race -count=1 -timeout 60m -skip '^TestScripts$' $(go list ./... | grep -v '/internal/searcheval$')
go test -count=1 -timeout 45m -run '^TestScripts$' ./internal/cli
go test -count=1 -timeout 30m ./internal/searcheval
# Memory limits are measured without the race detector, which multiplies a
# process's memory: a capture of a 1 GiB transcript stays under 100 MB.
go test -count=1 -run '^TestCaptureMemory$' ./internal/hooks
bash scripts/fuzz.sh
# A real MCP client (the MCP Inspector CLI, installed from npm into a cache
# folder) drives the built `kk mcp`.
bash scripts/mcp-e2e.sh
# A real harness CLI (Claude Code at its pinned version, installed from npm
# into a cache folder) runs headless with kk installed, against kk's fake
# model server on loopback.
bash scripts/e2e-harnesses.sh claude
