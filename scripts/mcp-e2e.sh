#!/usr/bin/env bash
# End-to-end test of `kk mcp` with a real MCP client: the MCP Inspector CLI
# (@modelcontextprotocol/inspector, pinned) drives the built kk against a
# sample repository: tools/list; tools/call of query_graph (context),
# manage_graph (create, then update with a stale version, which must fail
# with CONFLICT), kb_upsert, kb_check and kk_search; resources/read of
# kk://entry. Needs Go, git and Node.js with npm; the Inspector is
# installed once into a cache folder (KK_INSPECTOR_CACHE, default
# ~/.cache/kk/mcp-inspector-<version>).
set -euo pipefail
cd "$(dirname "$0")/.."

version=2.12.0
cache=${KK_INSPECTOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kk/mcp-inspector-$version}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for tool in go git node npm; do
  command -v "$tool" >/dev/null || { echo "mcp-e2e: $tool is not installed" >&2; exit 1; }
done

echo "mcp-e2e: building kk"
go build -o "$work/kk" ./cmd/kk
kk=$work/kk

if [ ! -x "$cache/node_modules/.bin/mcp-inspector" ]; then
  echo "mcp-e2e: installing @modelcontextprotocol/inspector@$version into $cache"
  mkdir -p "$cache"
  (cd "$cache" && npm install --no-fund --no-audit --loglevel=error "@modelcontextprotocol/inspector@$version" >/dev/null)
fi
inspector=$cache/node_modules/.bin/mcp-inspector

echo "mcp-e2e: creating the sample repository"
repo=$work/repo
mkdir -p "$repo/src/auth"
cd "$repo"
git init -q -b main
echo 'package auth' >src/auth/token.go
"$kk" init >/dev/null
"$kk" graph create --input - >/dev/null <<'JSON'
{"operation":"create","entityType":"molecule","name":"Identity","knowledge":"Who may do what."}
JSON
"$kk" graph create --input - >/dev/null <<'JSON'
{"operation":"create","entityType":"atom","name":"Token rotation","paths":["src/auth/**"],"knowledge":"Refresh tokens rotate every hour; never cache them.","moleculeId":"molecule-identity"}
JSON
"$kk" graph create --input - >/dev/null <<'JSON'
{"operation":"create","entityType":"atom","name":"Build scripts","paths":["scripts/*.sh"],"knowledge":"Scripts run from the repository root."}
JSON

fail=0
# run NAME WANT_EXIT ARGS...: runs the Inspector against kk mcp, checks its
# exit status and keeps its stdout in $out.
run() {
  local name=$1 want=$2
  shift 2
  local got=0
  out=$("$inspector" --cli "$kk" mcp --method "$@" 2>"$work/stderr") || got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL $name: exit $got, want $want" >&2
    cat "$work/stderr" >&2
    printf "%s\n" "$out" >&2
    fail=1
    return 1
  fi
}

# expect NAME JS: evaluates the JavaScript expression JS with r bound to
# the Inspector's JSON output; it must be true.
expect() {
  local name=$1 js=$2
  if printf '%s' "$out" | node -e '
    const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
    const env = r.content && r.content[0] && JSON.parse(r.content[0].text);
    process.exit((function () { return '"$js"'; })() ? 0 : 1);
  '; then
    echo "ok   $name"
  else
    echo "FAIL $name" >&2
    printf '%s\n' "$out" >&2
    fail=1
  fi
}

run tools/list 0 tools/list &&
  expect "tools/list names every tool" '["query_graph","manage_graph","manage_changelog","kb_query","kb_upsert","kb_delete","kb_check","kk_search","kk_read","kk_entry"].every(n => r.tools.some(t => t.name === n)) && r.tools.find(t => t.name === "query_graph").annotations.readOnlyHint === true'

run "query_graph context" 0 tools/call --tool-name query_graph --tool-arg operation=context --tool-arg 'paths=["src/auth/token.go","docs/none.md"]' &&
  expect "query_graph context groups the atom under its molecule" 'env.success && env.data.molecules[0].id === "molecule-identity" && env.data.molecules[0].atoms[0].matchedPaths[0] === "src/auth/token.go" && env.data.unmatchedPaths[0] === "docs/none.md"'

run "manage_graph create" 0 tools/call --tool-name manage_graph --tool-arg operation=create --tool-arg entityType=atom --tool-arg 'name="Session store"' --tool-arg 'paths=["src/session/**"]' --tool-arg 'knowledge="Sessions live in Redis."' &&
  expect "manage_graph create returns version 1" 'env.success && env.data.id === "map-session-store" && env.data.version === 1'

run "manage_graph update" 0 tools/call --tool-name manage_graph --tool-arg operation=update --tool-arg entityType=atom --tool-arg id=map-session-store --tool-arg version=1 --tool-arg 'knowledge="Sessions live in Redis, 24 h TTL."' &&
  expect "manage_graph update raises the version" 'env.success && env.data.version === 2'

# A tool error makes the Inspector exit 5.
run "manage_graph stale update" 5 tools/call --tool-name manage_graph --tool-arg operation=update --tool-arg entityType=atom --tool-arg id=map-session-store --tool-arg version=1 --tool-arg 'name="Sessions"' &&
  expect "a stale version fails with CONFLICT and the current version" 'r.isError === true && env.success === false && env.error.code === "CONFLICT" && env.error.details.currentVersion === 2'

run kb_upsert 0 tools/call --tool-name kb_upsert --tool-arg 'entities=[{"id":"REQ-1","type":"req","title":"Users log in","priority":"must"},{"id":"login","type":"test","title":"login works"}]' --tool-arg 'edges=[{"type":"verified_by","from":"req-1","to":"LOGIN"}]' --tool-arg created_by=mcp-e2e --tool-arg source=mcp-e2e &&
  expect "kb_upsert writes both entities under the ids given, edge ends matched without regard to case" 'env.success && env.data.ids.join() === "REQ-1,login"'

run kb_check 0 tools/call --tool-name kb_check &&
  expect "kb_check reports the must requirement without a scenario" 'env.success && env.data.violations.some(v => v.ids.includes("REQ-1"))'

run kk_search 0 tools/call --tool-name kk_search --tool-arg 'query="rotate tokens"' &&
  expect "kk_search finds the atom" 'env.success && env.data.branch === "main" && env.data.hits[0].id === "map-token-rotation"'

run "resources/read kk://entry" 0 resources/read --uri kk://entry &&
  expect "kk://entry is ENTRY.md" 'r.contents[0].uri === "kk://entry" && r.contents[0].mimeType === "text/markdown" && r.contents[0].text.includes("node_count")'

if [ "$fail" != 0 ]; then
  echo "mcp-e2e: FAILED" >&2
  exit 1
fi
echo "mcp-e2e: all checks passed"
