// kk's OpenCode plugin, written by `kk init --harnesses opencode`.
// `kk init --upgrade` rewrites it and `kk uninstall` removes it: edits are lost.
//
// OpenCode has no hook configuration, so this plugin turns OpenCode's
// session events into `kk hook <event> --harness opencode` runs, each with
// a small JSON payload on stdin. The kk processes run detached and are not
// waited for: OpenCode's event loop is never held up, and kk logs its own
// failures. OpenCode loads this file only because .opencode/opencode.json
// lists it under "plugin" (it does not load .mjs files from plugins/ on
// its own).

import { spawn } from "node:child_process";

// How kk is invoked (kk init --kk-command changes it).
const KK = "__KK_COMMAND__";

// kk sets KK_INTERNAL on the OpenCode runs it starts itself (background
// extraction, `opencode export`); those must not run kk's hooks again.
const GUARD = "KK_INTERNAL";

function runHook(event, payload, cwd) {
  const env = { ...process.env };
  delete env[GUARD];
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
  if (process.env[GUARD]) return {};
  const cwd = directory || worktree || process.cwd();
  // Sub-agent sessions (created with a parent) are part of their parent's
  // work: they get no context of their own and are not captured apart.
  const children = new Set();
  const fire = (events, harnessEvent, sessionID) => {
    if (typeof sessionID !== "string" || sessionID === "" || children.has(sessionID)) return;
    const payload = { session_id: sessionID, hook_event_name: harnessEvent, cwd };
    for (const event of events) runHook(event, payload, cwd);
  };
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
