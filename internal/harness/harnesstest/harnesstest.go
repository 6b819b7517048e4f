// Package harnesstest holds what the harness adapters' tests share: fake
// harness binaries (shell scripts written into a temporary folder put on
// PATH), golden files and small file helpers. Only tests import it.
package harnesstest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

// Script writes an executable file called name holding content (a whole
// shell script, #! line included) into a new temporary folder, and
// returns the folder.
func Script(t testing.TB, name, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Sh is Script for a /bin/sh script with the given body.
func Sh(t testing.TB, name, body string) string {
	t.Helper()
	return Script(t, name, "#!/bin/sh\n"+body)
}

// OnPath puts dir first on PATH and clears the recursion guard (which a
// test run inside kk's own hooks would inherit), for the rest of the
// test.
func OnPath(t testing.TB, dir string) {
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(harness.RecursionEnv, "")
}

// InstallFake puts a fake binary called name, running script, first on
// PATH and returns its folder.
func InstallFake(t testing.TB, name, script string) string {
	t.Helper()
	dir := Script(t, name, script)
	OnPath(t, dir)
	return dir
}

// Records is a piece of shell script that records what the script was
// started with into the folder out: its arguments (one a line) in args,
// the recursion guard in guard, its working folder in cwd and its stdin
// in stdin. A fake binary's script (see Sh) puts it before printing its
// answer.
func Records(out string) string {
	return `
for a in "$@"; do printf '%s\n' "$a"; done > '` + out + `/args'
printf '%s' "$KK_INTERNAL" > '` + out + `/guard'
pwd > '` + out + `/cwd'
cat > '` + out + `/stdin'
`
}

// RecorderScript is a fake harness binary that records what it was
// started with into $FAKE_DIR: its arguments (NUL-separated) in args,
// the recursion guard in env ("unset" when absent) and its stdin in
// stdin. It then prints $FAKE_DIR/out, prints $FAKE_ERR on stderr, sleeps
// $FAKE_SLEEP seconds and exits with $FAKE_EXIT.
const RecorderScript = `#!/bin/sh
printf '%s\0' "$@" > "$FAKE_DIR/args"
printf '%s' "${KK_INTERNAL-unset}" > "$FAKE_DIR/env"
cat > "$FAKE_DIR/stdin"
cat "$FAKE_DIR/out" 2>/dev/null
if [ -n "$FAKE_ERR" ]; then printf '%s\n' "$FAKE_ERR" >&2; fi
if [ -n "$FAKE_SLEEP" ]; then exec sleep "$FAKE_SLEEP"; fi
exit ${FAKE_EXIT:-0}
`

// Recorder puts a RecorderScript called name first on PATH, printing out,
// and returns the folder it records into. FAKE_EXIT, FAKE_ERR and
// FAKE_SLEEP start empty.
func Recorder(t testing.TB, name, out string) string {
	t.Helper()
	bin := Script(t, name, RecorderScript)
	dir := t.TempDir()
	WriteFile(t, filepath.Join(dir, "out"), []byte(out))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_DIR", dir)
	t.Setenv("FAKE_EXIT", "")
	t.Setenv("FAKE_ERR", "")
	t.Setenv("FAKE_SLEEP", "")
	t.Setenv(harness.RecursionEnv, "")
	return dir
}

// RecordedArgs returns the arguments a Recorder was last started with.
func RecordedArgs(t testing.TB, dir string) []string {
	t.Helper()
	s := strings.TrimSuffix(string(ReadFile(t, filepath.Join(dir, "args"))), "\x00")
	return strings.Split(s, "\x00")
}

// Env returns a getenv that reads m.
func Env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// ReadFile returns the content of p, failing the test when it cannot.
func ReadFile(t testing.TB, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// WriteFile writes data to p, creating its folder.
func WriteFile(t testing.TB, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Exists reports whether p exists.
func Exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Tree returns every file under root: slash-separated relative path →
// content.
func Tree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(rel)] = string(ReadFile(t, p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Golden compares got with the golden file at p, or, with update (the
// test's -update flag), rewrites the file.
func Golden(t testing.TB, p string, got []byte, update bool) {
	t.Helper()
	if update {
		WriteFile(t, p, got)
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run the tests with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", filepath.Base(p), got, want)
	}
}

// ByName indexes doctor findings by their name.
func ByName(checks []harness.Check) map[string]harness.Check {
	m := map[string]harness.Check{}
	for _, c := range checks {
		m[c.Name] = c
	}
	return m
}

// Compact returns the JSON b without insignificant white space.
func Compact(b []byte) []byte {
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		return b // not JSON: compared as it is
	}
	return c.Bytes()
}

// JSONEqual reports whether a and b encode to the same JSON.
func JSONEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// KeepsUserHooks checks that installed, a Claude-shaped settings or hooks
// file kk merged its hooks into, holds every top-level key of user in the
// same order with the same value (hooks aside) and every user matcher
// group byte for byte, and that its events are events (comma-separated,
// in order).
func KeepsUserHooks(t testing.TB, user, installed []byte, events string) {
	t.Helper()
	u, _ := harness.ParseObject(user)
	in, _ := harness.ParseObject(installed)
	if !slices.Equal(u.Keys(), in.Keys()) {
		t.Errorf("keys %v, want the user's %v", in.Keys(), u.Keys())
	}
	for _, k := range u.Keys() {
		if k == "hooks" {
			continue
		}
		a, _ := u.Get(k)
		b, _ := in.Get(k)
		if !bytes.Equal(Compact(a), Compact(b)) {
			t.Errorf("%s changed: %s", k, b)
		}
	}
	uh, _ := u.Get("hooks")
	ih, _ := in.Get("hooks")
	uhooks, _ := harness.ParseObject(uh)
	ihooks, _ := harness.ParseObject(ih)
	for _, ev := range uhooks.Keys() {
		var ug, ig []json.RawMessage
		raw, _ := uhooks.Get(ev)
		if err := json.Unmarshal(raw, &ug); err != nil {
			t.Fatalf("the user's %s hooks: %v", ev, err)
		}
		raw, _ = ihooks.Get(ev)
		if err := json.Unmarshal(raw, &ig); err != nil {
			t.Fatalf("the installed %s hooks: %v", ev, err)
		}
		for i, g := range ug {
			if i >= len(ig) || !bytes.Equal(Compact(g), Compact(ig[i])) {
				t.Errorf("hooks.%s[%d] changed", ev, i)
			}
		}
	}
	if got := strings.Join(ihooks.Keys(), ","); got != events {
		t.Errorf("hooks events in order %s", got)
	}
}

// ShippedSkills returns the skills this kk build ships, failing nothing:
// they are embedded.
func ShippedSkills() map[string][]byte {
	skills, _ := harness.ShippedSkills()
	return skills
}

// TwoSkills are two small skill templates in the harness-neutral format,
// for install tests.
var TwoSkills = map[string][]byte{
	"kk-add":    []byte("---\nname: kk-add\ndescription: Add one node.\nversion: 1\n---\n\n1. Ask.\n2. Write.\n"),
	"kk-curate": []byte("---\nname: kk-curate\ndescription: Curate.\nversion: 1\n---\n\n1. Read.\n2. Curate.\n"),
}

// Install installs a into root, invoking kk as command, with skills.
func Install(t testing.TB, a harness.Adapter, root, command string, skills map[string][]byte) []harness.Change {
	t.Helper()
	ch, err := a.Install(context.Background(), harness.InstallOptions{Root: root, Command: command, Skills: skills})
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	return ch
}

// Uninstall uninstalls a from root, with skills.
func Uninstall(t testing.TB, a harness.Adapter, root string, skills map[string][]byte) []harness.Change {
	t.Helper()
	ch, err := a.Uninstall(context.Background(), harness.InstallOptions{Root: root, Skills: skills})
	if err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	return ch
}

// Levels lists doctor findings as "<name>=<level>", space-separated.
func Levels(checks []harness.Check) string {
	var out []string
	for _, c := range checks {
		out = append(out, c.Name+"="+c.Level)
	}
	return strings.Join(out, " ")
}

// Checks runs a's doctor on root and indexes the findings by name, after
// checking that each has a known level and that each that is not ok says
// how to fix it.
func Checks(t testing.TB, a harness.Adapter, root string) map[string]harness.Check {
	t.Helper()
	out := map[string]harness.Check{}
	for _, c := range a.Doctor(context.Background(), root) {
		if c.Level != harness.LevelOK && c.Level != harness.LevelWarn && c.Level != harness.LevelError {
			t.Errorf("check %s has level %q", c.Name, c.Level)
		}
		if c.Level != harness.LevelOK && c.Fix == "" {
			t.Errorf("check %s (%s) has no fix", c.Name, c.Level)
		}
		out[c.Name] = c
	}
	return out
}

// ExpectLevel checks that the finding name in got has level and a
// message holding contains.
func ExpectLevel(t testing.TB, got map[string]harness.Check, name, level, contains string) {
	t.Helper()
	c, ok := got[name]
	if !ok {
		t.Fatalf("no %q check", name)
	}
	if c.Level != level || !strings.Contains(c.Message, contains) {
		t.Errorf("%s: %s %q, want %s containing %q", name, c.Level, c.Message, level, contains)
	}
}
