// kk's OpenCode plugin, written by `kk init --harnesses opencode`.
// `kk init --upgrade` rewrites it and `kk uninstall` removes it: edits are lost.
//
// OpenCode has no hook configuration, so this plugin turns OpenCode's
// session events into `kk hook <event> --harness opencode` runs, each with
// a small JSON payload on stdin. The kk processes run detached and are not
// waited for: OpenCode's event loop is never held up, and kk logs its own
// failures. One run is waited for, briefly: session-start when the plugin
// loads, so that the context file OpenCode reads (listed under
// "instructions") is current before the first session's first request.
// OpenCode loads this file only because .opencode/opencode.json lists it
// under "plugin" (it does not load .mjs files from plugins/ on its own).

import { spawn, spawnSync } from "node:child_process";

// How kk is invoked (kk init --kk-command changes it).
const KK = "kk";

// kk sets KK_INTERNAL on the OpenCode runs it starts itself (background
// extraction, `opencode export`); those must not run kk's hooks again.
const GUARD = "KK_INTERNAL";

// kenkeep, the tool kk succeeds, sets KENKEEP_BUILDER_INTERNAL=1 on the
// OpenCode runs it starts: kk's hooks stay out of those too.
const KENKEEP_GUARD = "KENKEEP_BUILDER_INTERNAL";

// The environment of kk's runs: without the guard, which only kk's own
// OpenCode runs carry.
function hookEnv() {
  const env = { ...process.env };
  delete env[GUARD];
  return env;
}

// The OpenCode executable this plugin runs in, for `opencode export`
// when `opencode` is not on PATH.
const OPENCODE = typeof process.execPath === "string" ? process.execPath : "";

// runHookNow runs a hook and waits for it, at most timeout ms.
function runHookNow(event, payload, cwd, timeout) {
  try {
    spawnSync(KK, ["hook", event, "--harness", "opencode"], {
      cwd,
      env: hookEnv(),
      input: JSON.stringify(payload),
      stdio: ["pipe", "ignore", "ignore"],
      timeout,
      windowsHide: true,
    });
  } catch {}
}

function runHook(event, payload, cwd) {
  const env = hookEnv();
  let child;
  try {
    child = spawn(KK, ["hook", event, "--harness", "opencode"], {
      cwd,
      env,
      stdio: ["pipe", "ignore", "ignore"],
      detached: process.platform !== "win32",
      windowsHide: true,
    });
  } catch {
    return;
  }
  child.on("error", () => {});
  child.stdin.on("error", () => {});
  child.stdin.end(JSON.stringify(payload));
  child.unref();
}

export const KkPlugin = async ({ directory, worktree } = {}) => {
  if (process.env[GUARD] || process.env[KENKEEP_GUARD] === "1") return {};
  const cwd = directory || worktree || process.cwd();
  // Sub-agent sessions (created with a parent) are part of their parent's
  // work: they get no context of their own and are not captured apart.
  const children = new Set();
  const fire = (events, harnessEvent, sessionID) => {
    if (typeof sessionID !== "string" || sessionID === "" || children.has(sessionID)) return;
    const payload = { session_id: sessionID, hook_event_name: harnessEvent, cwd, opencode_bin: OPENCODE };
    for (const event of events) runHook(event, payload, cwd);
  };
  // Before any session: the context file is written now, not raced by the
  // first request (session.created's refresh serves later sessions).
  runHookNow("session-start", { hook_event_name: "plugin.load", cwd }, cwd, 3000);
  return {
    event: async ({ event } = {}) => {
      const props = (event && event.properties) || {};
      switch (event && event.type) {
        case "session.created": {
          const info = props.info || {};
          const id = props.sessionID || info.id;
          if (info.parentID) {
            if (id) children.add(id);
            return;
          }
          fire(["session-start", "proposal-drain", "lint-tick"], "session.created", id);
          return;
        }
        case "session.idle":
          fire(["capture"], "session.idle", props.sessionID);
          return;
      }
    },
    "experimental.session.compacting": async (input) => {
      fire(["capture"], "experimental.session.compacting", input && input.sessionID);
    },
  };
};

// OpenCode loads a file plugin from its default export: an id and a
// server function that returns the hooks. (Older releases called every
// export as a plugin function; KkPlugin serves those.)
export default { id: "kk", server: KkPlugin };
