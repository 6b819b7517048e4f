#!/usr/bin/env bash
# End-to-end test of kk inside the real harness CLIs: Claude Code (current
# and an older version), Codex CLI, Gemini CLI, OpenCode and Copilot CLI,
# at the versions pinned in scripts/harness-versions.txt, installed from
# npm into a cache folder. Each runs headless against kk's fake model
# server (cmd/kk-fakemodel, on loopback, no API key) through its documented
# base-URL or custom-provider setting, in a fresh git repository holding
# `kk init --harnesses <id>`, one node and a commit, with a HOME of its
# own. For each case it checks:
#
#   config    the harness accepts kk's installed configuration: it exits 0,
#             answers, and kk's hooks log no error
#   entry     ENTRY.md (a marker in the node's summary) is in a model request
#   log       a session log is written whose user turns are exactly the
#             user's words (nothing the harness or kk injected) and which
#             holds the agent's reply
#   cursory   a "hello" session is logged as skipped (cursory)
#   skills    kk's skills are listed to the model (kk-add's description)
#   mcp       kk's ten MCP tools are in a model request
#   sessions  KK_E2E_SESSIONS sessions in a row (default 3) give as many
#             logs, each with its own words and the reply
#
# Usage:
#   bash scripts/e2e-harnesses.sh                  # every case
#   bash scripts/e2e-harnesses.sh claude codex     # some cases
#   KK_E2E_SESSIONS=10 bash scripts/e2e-harnesses.sh opencode
#
# Needs Go, git, Node.js with npm, and network access to the npm registry
# the first time a pinned version is installed. Environment:
#   KK_E2E_CACHE    where the CLIs are installed (default ~/.cache/kk-e2e,
#                   or $XDG_CACHE_HOME/kk-e2e); about 1.7 GB for all cases
#   KK_E2E_SESSIONS sessions in a row per case (default 3; acceptance: 10)
#   KK_E2E_KEEP=1   keep the work folder (printed) for inspection
#   KK_E2E_RECORD   a folder: each case's transcripts are copied there, for
#                   refreshing harnesses/<id>/testdata/transcripts
set -euo pipefail
cd "$(dirname "$0")/.."
repo_root=$PWD

cache=${KK_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kk-e2e}
sessions=${KK_E2E_SESSIONS:-3}
[ "$sessions" -ge 2 ] || { echo "e2e: KK_E2E_SESSIONS must be at least 2" >&2; exit 2; }
for tool in go git node npm timeout; do
  command -v "$tool" >/dev/null || { echo "e2e: $tool is not installed" >&2; exit 1; }
done

# The fake model's answer, and the marker ENTRY.md carries.
reply="kk-e2e fake model: the widget cache is flushed every five minutes."
marker="KKE2EMARKER"
skill_marker="Record one piece of project knowledge" # kk-add's description
mcp_tools=(query_graph manage_graph manage_changelog kb_query kb_upsert kb_delete kb_check kk_search kk_read kk_entry)

work=$(mktemp -d "${TMPDIR:-/tmp}/kk-e2e.XXXXXX")
fake_pid=
cleanup() {
  [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null || true
  if [ "${KK_E2E_KEEP:-}" = 1 ]; then
    echo "e2e: work folder kept: $work"
    return
  fi
  # A harness may leave a child writing into its HOME for a moment after
  # it exits (a session's detached capture): rm then finds a folder filled
  # behind it. Try again for a few seconds; the verdict stands either way.
  local i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    rm -rf "$work" 2>/dev/null && return
    sleep 1
  done
  echo "e2e: could not remove the work folder $work (something still writes into it)" >&2
}
trap cleanup EXIT

echo "e2e: building kk and kk-fakemodel"
mkdir -p "$work/bin"
go build -o "$work/bin/kk" ./cmd/kk
go build -o "$work/bin/kk-fakemodel" ./cmd/kk-fakemodel
base_path=$work/bin:$PATH

# pinned CASE prints "package version bin" for a case.
pinned() {
  awk -v c="$1" '!/^#/ && NF == 4 && $1 == c { print $2, $3, $4; found = 1 } END { exit !found }' scripts/harness-versions.txt
}

# install PACKAGE VERSION BIN prints the folder holding BIN, installing the
# package there first when needed.
install_cli() {
  local pkg=$1 version=$2 bin=$3 dir
  dir=$cache/$(printf '%s' "$pkg" | tr '/@' '__')-$version
  if [ ! -x "$dir/node_modules/.bin/$bin" ]; then
    echo "e2e: installing $pkg@$version into $dir" >&2
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"private": true}' >"$dir/package.json"
    (cd "$dir" && npm install --no-fund --no-audit --loglevel=error "$pkg@$version" >&2)
  fi
  echo "$dir/node_modules/.bin"
}

fail=0
failed_cases=()
# result CASE CHECK OK [DETAIL]: prints one check's outcome.
result() {
  if [ "$3" = 0 ]; then
    echo "ok   $1: $2"
  else
    echo "FAIL $1: $2${4:+ ($4)}" >&2
    fail=1
    case " ${failed_cases[*]-} " in *" $1 "*) ;; *) failed_cases+=("$1") ;; esac
  fi
}

# --- per-harness setup and runs ---------------------------------------
# setup_<id> writes the harness's user configuration under $HOME pointing
# at the fake model; run_<id> PROMPT runs one headless session in the
# repository, under a 300 s timeout.

setup_claude() { :; }
run_claude() {
  timeout 300 env ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=kk-e2e-not-a-key \
    DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
    claude -p "$1"
}

setup_codex() {
  export CODEX_HOME=$HOME/.codex
  mkdir -p "$CODEX_HOME"
  cat >"$CODEX_HOME/config.toml" <<EOF
model = "gpt-5"
model_provider = "kkfake"

[model_providers.kkfake]
name = "kk fake model"
base_url = "$url/v1"
wire_api = "responses"

[projects."$repo"]
trust_level = "trusted"
EOF
}
# Codex runs repository hooks only once the user trusted them in /hooks;
# headless, --dangerously-bypass-hook-trust stands in for that step.
run_codex() { timeout 300 codex exec --dangerously-bypass-hook-trust "$1"; }

setup_gemini() {
  mkdir -p "$HOME/.gemini"
  echo '{"security": {"auth": {"selectedType": "gemini-api-key"}}}' >"$HOME/.gemini/settings.json"
  # Headless Gemini CLI refuses an untrusted folder (exit 55).
  printf '{"%s": "TRUST_FOLDER"}\n' "$repo" >"$HOME/.gemini/trustedFolders.json"
}
# MCP tools reach the model in headless runs only with --approval-mode yolo.
run_gemini() {
  timeout 300 env GOOGLE_GEMINI_BASE_URL="$url" GEMINI_API_KEY=kk-e2e-not-a-key gemini -p "$1" --approval-mode yolo
}

setup_opencode() {
  mkdir -p "$HOME/.config/opencode"
  cat >"$HOME/.config/opencode/opencode.json" <<EOF
{
  "\$schema": "https://opencode.ai/config.json",
  "provider": {
    "kkfake": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "kk fake model",
      "options": {"baseURL": "$url/v1", "apiKey": "kk-e2e-not-a-key"},
      "models": {"fake-model": {"name": "fake model"}}
    }
  },
  "model": "kkfake/fake-model",
  "small_model": "kkfake/fake-model",
  "autoupdate": false,
  "share": "disabled"
}
EOF
}
# The words go as separate arguments: `opencode run` quotes an argument
# holding spaces into the message.
run_opencode() {
  # shellcheck disable=SC2086
  timeout 300 env OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 opencode run $1
}

setup_copilot() { :; }
# BYOK through COPILOT_PROVIDER_*, offline (no GitHub sign-in);
# COPILOT_ALLOW_ALL=true trusts the folder, as a prompt-mode run needs for
# repository hooks and MCP servers.
run_copilot() {
  timeout 300 env COPILOT_HOME="$HOME/.copilot" COPILOT_PROVIDER_BASE_URL="$url/v1" COPILOT_PROVIDER_TYPE=openai \
    COPILOT_MODEL=gpt-5 COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false COPILOT_ALLOW_ALL=true \
    copilot -p "$1"
}

# record copies the case's transcripts to $KK_E2E_RECORD/<case>/.
record() {
  [ -n "${KK_E2E_RECORD:-}" ] || return 0
  local dest=$KK_E2E_RECORD/$case
  mkdir -p "$dest"
  find "$HOME/.claude/projects" "$HOME/.codex/sessions" "$HOME/.gemini/tmp" "$HOME/.copilot/session-state" \
    -name '*.jsonl' -type f -exec cp {} "$dest/" \; 2>/dev/null || true
  if [ "$id" = opencode ]; then
    local sid
    for sid in $(opencode session list --format json 2>/dev/null | node -e 'for (const s of JSON.parse(require("fs").readFileSync(0, "utf8"))) console.log(s.id)'); do
      KK_INTERNAL=1 opencode export "$sid" >"$dest/$sid.json" 2>/dev/null || true
    done
  fi
}

# --- checks -------------------------------------------------------------

logs_dir() { echo "$repo/.ai/kenkeep/_sessions"; }
count_logs() { find "$(logs_dir)" -maxdepth 1 -name '*.md' 2>/dev/null | wc -l; }

# wait_log N: waits (up to 120 s: OpenCode and Copilot capture in a
# detached process) until there are N logs and the one new since the last
# call holds the agent's reply; sets log to it. (The new log is told apart
# by name, not by time: the background extraction rewrites older logs.)
seen_logs=" "
wait_log() {
  local want=$1 f
  log=
  for _ in $(seq 600); do
    if [ "$(count_logs)" -ge "$want" ]; then
      for f in "$(logs_dir)"/*.md; do
        case "$seen_logs" in *" $f "*) ;; *) log=$f ;; esac
      done
      if [ -n "$log" ] && grep -qF "[AGENT]: $reply" "$log"; then
        seen_logs="$seen_logs$log "
        return 0
      fi
    fi
    sleep 0.2
  done
  return 1
}

# user_turns LOG prints the log's user turns, one a line (a turn spanning
# lines is joined with \n).
user_turns() {
  awk '
    /^## Proposal/ { exit }
    /^\[USER\]: / { if (u != "") print u; u = substr($0, 9); inuser = 1; next }
    /^\[AGENT\]: / { if (u != "") print u; u = ""; inuser = 0; next }
    inuser { u = u "\\n" $0 }
    END { if (u != "") print u }
  ' "$1" | sed -e 's/\(\\n\)*$//'
}

status_of() { sed -n 's/^proposal_status: //p' "$1" | head -1; }

# session N PROMPT: runs one session; prints "exit code" and keeps its
# output in $case_dir/out.N.
session() {
  local n=$1 prompt=$2 rc=0
  (cd "$repo" && "run_$id" "$prompt") >"$case_dir/out.$n" 2>"$case_dir/err.$n" </dev/null || rc=$?
  echo "$rc"
}

run_case() {
  case=$1
  local spec pkg version bin bindir
  if ! spec=$(pinned "$case"); then
    echo "e2e: no case $case in scripts/harness-versions.txt" >&2
    fail=1
    return
  fi
  read -r pkg version bin <<<"$spec"
  id=${case%@*}
  echo "== $case ($pkg@$version)"
  bindir=$(install_cli "$pkg" "$version" "$bin")
  case_dir=$work/$case
  repo=$case_dir/repo
  seen_logs=" "
  mkdir -p "$case_dir/home" "$repo"
  export HOME=$case_dir/home PATH=$bindir:$base_path
  unset CLAUDECODE KK_INTERNAL KK_ROOT CODEX_HOME

  # The repository: kk for this harness, one node, a commit.
  (
    cd "$repo"
    git init -q -b main
    git config user.email e2e@example.invalid
    git config user.name "kk e2e"
    echo 'package widget' >widget.go
    kk init --harnesses "$id" >/dev/null 2>&1
    echo "The sweeper flushes the widget cache every five minutes." |
      kk node write practice "Widget cache flush" --description "$marker: the widget cache is flushed every five minutes" --tag cache >/dev/null
    git add -A
    git commit -qm "kk e2e"
  )

  # The fake model server.
  rm -f "$case_dir/addr"
  kk-fakemodel -log "$case_dir/requests.jsonl" -addr-file "$case_dir/addr" >/dev/null 2>"$case_dir/fakemodel.err" &
  fake_pid=$!
  for _ in $(seq 100); do [ -s "$case_dir/addr" ] && break; sleep 0.1; done
  url=$(cat "$case_dir/addr")
  "setup_$id"

  # Session 1: a question, long enough not to be cursory (over 200
  # characters from the user).
  local prompt="Explain how the widget cache works in this repository: who flushes it, how often, and what happens to readers that hold an entry while it is flushed. Answer in two sentences, and name the file that holds the sweeper."
  local rc log
  rc=$(session 1 "$prompt")
  local ok=1
  if [ "$rc" = 0 ] && grep -qF "$reply" "$case_dir/out.1"; then ok=0; fi
  result "$case" "config accepted (exit $rc, answered)" "$ok" "$(tail -c 400 "$case_dir/err.1" | tr '\n' ' ')"
  wait_log 1 && ok=0 || ok=1
  result "$case" "a session log with the agent's reply" "$ok" "$(count_logs) log(s)"
  if [ -n "$log" ]; then
    [ "$(user_turns "$log")" = "$prompt" ] && ok=0 || ok=1
    result "$case" "the log's user turns are the user's words only" "$ok" "$(user_turns "$log" | head -c 300 | tr '\n' ' ')"
    [ "$(status_of "$log")" = pending ] && ok=0 || ok=1
    result "$case" "the question is queued for extraction" "$ok" "status $(status_of "$log")"
  fi
  grep -qF "$marker" "$case_dir/requests.jsonl" && ok=0 || ok=1
  result "$case" "ENTRY.md in the model request" "$ok"
  grep -qF "$skill_marker" "$case_dir/requests.jsonl" && ok=0 || ok=1
  result "$case" "kk's skills listed to the model" "$ok"
  local missing=() t
  # As each harness names them: mcp__kk__<t> (Claude Code), a tool <t>
  # in the mcp__kk namespace (Codex), mcp_kk_<t> (Gemini), kk_<t>
  # (OpenCode), kk-<t> (Copilot).
  for t in "${mcp_tools[@]}"; do
    grep -qE "(mcp__kk__|mcp_kk_|\"kk_|\"kk-)$t\"|\"name\":\"$t\"|mcp__kk__$t" "$case_dir/requests.jsonl" || missing+=("$t")
  done
  [ ${#missing[@]} = 0 ] && ok=0 || ok=1
  result "$case" "kk's ${#mcp_tools[@]} MCP tools in the model request" "$ok" "missing: ${missing[*]-}"

  # Session 2: hello, which is cursory.
  rc=$(session 2 hello)
  wait_log 2 && ok=0 || ok=1
  if [ "$ok" = 0 ] && [ "$rc" = 0 ] && [ "$(user_turns "$log")" = hello ] && [ "$(status_of "$log")" = skipped ]; then ok=0; else ok=1; fi
  result "$case" "a \"hello\" session is skipped as cursory" "$ok" "exit $rc, status ${log:+$(status_of "$log")}, user turns: ${log:+$(user_turns "$log" | head -c 200 | tr '\n' ' ')}"

  # Sessions 3…: more questions, each its own log with its own words.
  local n bad=0
  for n in $(seq 3 "$sessions"); do
    prompt="Question $n: where does the sweeper run, and how often does it flush the widget cache?"
    rc=$(session "$n" "$prompt")
    if ! wait_log "$n" || [ "$rc" != 0 ] || [ "$(user_turns "$log")" != "$prompt" ]; then
      bad=$((bad + 1))
      echo "     session $n: exit $rc, log ${log:-none}" >&2
    fi
  done
  [ "$bad" = 0 ] && [ "$(count_logs)" = "$sessions" ] && ok=0 || ok=1
  result "$case" "$sessions sessions in a row give $sessions logs, each with its own words and the reply" "$ok" "$(count_logs) logs, $bad bad"

  # No hook failed along the way.
  local errors
  errors=$(cat "$repo"/.ai/kenkeep/_logs/hook-errors-*.log 2>/dev/null || true)
  [ -z "$errors" ] && ok=0 || ok=1
  result "$case" "no line in the hook-error log" "$ok" "$(printf '%s' "$errors" | head -c 600)"

  record
  kill "$fake_pid" 2>/dev/null || true
  wait "$fake_pid" 2>/dev/null || true
  fake_pid=
}

cases=("$@")
if [ ${#cases[@]} = 0 ]; then
  mapfile -t cases < <(awk '!/^#/ && NF == 4 { print $1 }' scripts/harness-versions.txt)
fi
for c in "${cases[@]}"; do
  run_case "$c"
done
cd "$repo_root"
if [ "$fail" != 0 ]; then
  echo "e2e: FAILED: ${failed_cases[*]-}" >&2
  exit 1
fi
echo "e2e: all checks passed (${cases[*]})"
