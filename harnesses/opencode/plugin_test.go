package opencode

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

// node returns the node binary, or skips: the plugin is JavaScript and
// only a JavaScript runtime can check it.
func node(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH, so the OpenCode plugin's JavaScript cannot be loaded here")
	}
	return p
}

func TestPluginSyntax(t *testing.T) {
	nodeBin := node(t)
	for _, cmd := range []string{"kk", `/opt/my "kk"/bin/kk`, `C:\Tools\kk.exe`, "/srv/ünï/kk\u2028x"} {
		src, err := renderPlugin(cmd)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "kk.mjs")
		write(t, p, src)
		if out, err := exec.Command(nodeBin, "--check", p).CombinedOutput(); err != nil {
			t.Errorf("node --check on the plugin for %q: %v\n%s", cmd, err, out)
		}
	}
}

// pluginDriver loads the plugin the way OpenCode does (default export
// {id, server}), feeds it OpenCode events and waits for the kk runs.
const pluginDriver = `
import { readdirSync } from "node:fs";
const [pluginPath, outDir, mode] = process.argv.slice(2);
const fail = (m) => { console.error(m); process.exit(1); };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mod = await import(pluginPath);
if (!mod.default || mod.default.id !== "kk" || typeof mod.default.server !== "function") fail("the default export must be {id: \"kk\", server}");
if (mod.KkPlugin !== mod.default.server) fail("KkPlugin must be the server function");
const hooks = await mod.default.server({ directory: process.cwd(), worktree: process.cwd() });
if (mode === "guarded") {
  if (Object.keys(hooks).length !== 0) fail("the plugin registered hooks with KK_INTERNAL set");
  process.exit(0);
}
if (typeof hooks.event !== "function" || typeof hooks["experimental.session.compacting"] !== "function") fail("hooks missing: " + Object.keys(hooks));
// A sub-agent session: nothing runs for it, now or when it goes idle.
await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_child", parentID: "ses_main" } } } });
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_child" } } });
await hooks.event({ event: { type: "message.updated", properties: { info: {} } } });
await hooks.event({});
await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_main" } } } });
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_main" } } });
await hooks["experimental.session.compacting"]({ sessionID: "ses_main" }, { context: [] });
const done = () => readdirSync(outDir).filter((n) => !n.endsWith(".tmp"));
for (const end = Date.now() + 15000; Date.now() < end; await sleep(50)) {
  if (done().length >= 6) {
    await sleep(300); // time for a run too many to show up
    process.exit(0);
  }
}
fail("kk ran " + done().length + " times, want 6");
`

// recordingKK is a fake kk that records each run in its own folder of out:
// its arguments, stdin, working folder and whether KK_INTERNAL was set.
const recordingKK = `
d="$KK_TEST_OUT/$2.$$"
mkdir "$d.tmp"
for a in "$@"; do printf '%s\n' "$a"; done > "$d.tmp/args"
cat > "$d.tmp/stdin"
pwd > "$d.tmp/cwd"
if [ "${KK_INTERNAL+set}" = set ]; then echo set; else echo unset; fi > "$d.tmp/guard"
mv "$d.tmp" "$d"
`

func TestPluginRunsKKHooks(t *testing.T) {
	nodeBin := node(t)
	root := t.TempDir()
	if _, err := New().Install(context.Background(), harness.InstallOptions{Root: root, Command: "kk", Skills: testSkills}); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(root, ".opencode", "plugins", "kk.mjs")
	driver := filepath.Join(t.TempDir(), "driver.mjs")
	write(t, driver, []byte(pluginDriver))
	out := t.TempDir()
	bin := fakeBinary(t, "kk", recordingKK)

	cmd := exec.Command(nodeBin, driver, plugin, out, "run")
	cmd.Dir = root
	// KK_INTERNAL is set but empty: the plugin runs, and must not hand the
	// variable on to kk.
	cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + filepath.Dir(nodeBin) + string(os.PathListSeparator) + "/bin:/usr/bin", "KK_TEST_OUT=" + out, "KK_INTERNAL="}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("driver: %v\n%s", err, b)
	}

	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	for _, e := range entries {
		d := filepath.Join(out, e.Name())
		event, _, _ := strings.Cut(e.Name(), ".")
		if args := string(read(t, filepath.Join(d, "args"))); args != "hook\n"+event+"\n--harness\nopencode\n" {
			t.Errorf("%s: args %q", e.Name(), args)
		}
		if g := strings.TrimSpace(string(read(t, filepath.Join(d, "guard")))); g != "unset" {
			t.Errorf("%s: KK_INTERNAL was handed to kk", e.Name())
		}
		if cwd := strings.TrimSpace(string(read(t, filepath.Join(d, "cwd")))); cwd != root {
			t.Errorf("%s: ran in %s, want %s", e.Name(), cwd, root)
		}
		var p map[string]string
		if err := json.Unmarshal(read(t, filepath.Join(d, "stdin")), &p); err != nil {
			t.Errorf("%s: payload: %v", e.Name(), err)
			continue
		}
		switch {
		case p["hook_event_name"] == "plugin.load":
			// The session-start the plugin waits for as it loads, before any
			// session exists.
			if p["session_id"] != "" || p["cwd"] != root || event != "session-start" {
				t.Errorf("%s: payload %v", e.Name(), p)
			}
		case p["session_id"] != "ses_main" || p["cwd"] != root || p["opencode_bin"] == "":
			t.Errorf("%s: payload %v", e.Name(), p)
		}
		// The payload is one kk's adapter reads.
		if in, err := New().ParseHookInput(read(t, filepath.Join(d, "stdin"))); err != nil || in.HarnessEvent != p["hook_event_name"] {
			t.Errorf("%s: ParseHookInput: %+v %v", e.Name(), in, err)
		}
		runs = append(runs, event+" "+p["hook_event_name"])
	}
	sort.Strings(runs)
	want := []string{
		"capture experimental.session.compacting",
		"capture session.idle",
		"lint-tick session.created",
		"proposal-drain session.created",
		"session-start plugin.load",
		"session-start session.created",
	}
	if strings.Join(runs, "\n") != strings.Join(want, "\n") {
		t.Errorf("kk runs:\n%s\nwant:\n%s", strings.Join(runs, "\n"), strings.Join(want, "\n"))
	}
}

func TestPluginDoesNothingUnderKKInternal(t *testing.T) {
	nodeBin := node(t)
	root := t.TempDir()
	if _, err := New().Install(context.Background(), harness.InstallOptions{Root: root, Command: "kk", Skills: testSkills}); err != nil {
		t.Fatal(err)
	}
	driver := filepath.Join(t.TempDir(), "driver.mjs")
	write(t, driver, []byte(pluginDriver))
	// kk's guard, and kenkeep's (KENKEEP_BUILDER_INTERNAL=1, which
	// kenkeep's own OpenCode runs carry).
	for _, guard := range []string{"KK_INTERNAL=1", "KENKEEP_BUILDER_INTERNAL=1"} {
		cmd := exec.Command(nodeBin, driver, filepath.Join(root, ".opencode", "plugins", "kk.mjs"), t.TempDir(), "guarded")
		cmd.Env = []string{"PATH=" + filepath.Dir(nodeBin), guard}
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("driver under %s: %v\n%s", guard, err, b)
		}
	}
}
