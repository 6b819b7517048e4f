package hooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
)

// kkBinary builds the kk binary into a folder of the test, for a test
// that starts it as a real child process (the background sync).
func kkBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kk")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/kk-project/kk/cmd/kk").CombinedOutput(); err != nil {
		t.Fatalf("building kk: %v\n%s", err, out)
	}
	return bin
}

// promptOut runs the prompt-context hook as `kk hook` does (Run, default
// options but for the executable) and returns the context it printed.
func promptOut(t *testing.T, k *store.KB, prompt string, exe func() (string, error)) string {
	t.Helper()
	inv, out, _ := invocation(t, k.Root, "prompt-context", `{"session_id":"`+sid+`","cwd":"`+k.Root+`","prompt":"`+prompt+`"}`)
	inv.Executable = exe
	Run(context.Background(), inv)
	if out.Len() == 0 {
		return ""
	}
	var env struct{ Event, Context string }
	if err := json.Unmarshal(out.Bytes(), &env); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	return env.Context
}

// indexDB opens the current branch's index file for the test's own reads
// and writes.
func indexDB(t *testing.T, k *store.KB) *sql.DB {
	t.Helper()
	branch, err := index.CurrentBranch(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+index.Path(k, branch)+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// expectedSync is the index's ExpectedSync, read through a fresh handle.
func expectedSync(t *testing.T, k *store.KB) (time.Duration, bool) {
	t.Helper()
	ctx := context.Background()
	branch, err := index.CurrentBranch(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	k2 := store.New(k.Root)
	defer func() { _ = k2.Close() }()
	db, err := index.OpenShared(ctx, k2, branch)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := db.ExpectedSync(ctx)
	return d, ok
}

const rotateLeaf = "---\ntype: practice\ntitle: Rotate signing keys every quarter\ndescription: How the signing keys are rotated.\n" +
	"tags: [security]\nkk_schema_version: 3\nkk_id: practice-rotate-signing-keys\nkk_derived_from: []\nkk_relates_to: []\n" +
	"kk_depends_on: []\nkk_confidence: high\n---\nRun make rotate-keys; the old key stays valid for a week.\n"

// When the index's last walk says a sync cannot finish within the budget
// (as at 100,000 leaves on a slow disk), the hook starts none: it answers
// from the index as last committed at once, which writes through kk keep
// current, and a real `kk sync` started in the background catches up
// with a leaf written by hand, which the next prompt then finds.
func TestPromptContextSkipsAWalkPastTheBudget(t *testing.T) {
	bin := kkBinary(t)
	k, _ := promptKB(t)
	ctx := context.Background()
	if _, err := PromptContextText(ctx, k, "payment retry", Options{}); err != nil { // a sync: records its walk
		t.Fatal(err)
	}
	if d, ok := expectedSync(t, k); !ok || d <= 0 {
		t.Fatalf("no walk recorded by the sync: %v %v", d, ok)
	}
	// The background sync: the real kk, through a wrapper that records
	// its arguments and its end (its exit status written whole, so that
	// the test never reads the file half written), so that the test waits
	// for it, and that
	// starts kk only once the test has seen both prompts answered without
	// it (a sync that ended between them would find the hand-written leaf).
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "kk")
	writeFile(t, wrapper, "#!/bin/sh\necho \"$@\" >> '"+dir+"/args'\n"+
		"while [ ! -e '"+dir+"/go' ]; do sleep 0.05; done\n"+
		"'"+bin+"' \"$@\" > '"+dir+"/out' 2>&1\necho $? > '"+dir+"/done.tmp'\nmv '"+dir+"/done.tmp' '"+dir+"/done'\n")
	if err := os.Chmod(wrapper, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := func() (string, error) { return wrapper, nil }

	// A leaf written through kk, then one written by hand (a write
	// through kk brings the index up to date with the whole tree first).
	addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Deploy freeze on Fridays", Tags: []string{"deploy"},
		Description: "No deploys after Friday noon.", Body: "The release train stops at noon on Fridays.\n", Folder: "ops"}, true)
	writeFile(t, k.NodePath("security/practice-rotate-signing-keys.md"), rotateLeaf)
	// The walk as a large tree records it: 10 s for the leaves there are
	// (the write's own look at the tree recorded its real cost).
	db := indexDB(t, k)
	if _, err := db.Exec(`UPDATE meta SET value = ? WHERE key = 'walk_ns'`, strconv.FormatInt(int64(10*time.Second), 10)); err != nil {
		t.Fatal(err)
	}
	if got := promptOut(t, k, "when is the deploy freeze?", exe); !strings.Contains(got, "Deploy freeze on Fridays (.ai/kenkeep/nodes/ops/") {
		t.Fatalf("the leaf written through kk is not found without a sync:\n%s", got)
	}
	if got := promptOut(t, k, "how do we rotate the signing keys?", exe); got != "" {
		t.Fatalf("the hook synced in process (it found the leaf written by hand):\n%s", got)
	}
	if ds := diagnostics(t, k); len(ds) != 0 {
		t.Fatalf("diagnostics %+v", ds)
	}
	writeFile(t, filepath.Join(dir, "go"), "")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "done")); err == nil {
			if s := strings.TrimSpace(string(data)); s != "0" {
				t.Fatalf("the background sync exited %s: %s", s, readFile(t, filepath.Join(dir, "out")))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background sync did not end within a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// One background sync for the two prompts (at most one a minute).
	if got := readFile(t, filepath.Join(dir, "args")); got != "sync --root "+k.Root+"\n" {
		t.Fatalf("background syncs: %q", got)
	}
	if got := promptOut(t, k, "how do we rotate the signing keys?", exe); !strings.Contains(got, "Rotate signing keys every quarter (.ai/kenkeep/nodes/security/practice-rotate-signing-keys.md)") {
		t.Fatalf("after the background sync:\n%s", got)
	}
	// The background sync recorded its own walk: the tree is small.
	if d, ok := expectedSync(t, k); !ok || d >= Defaults().PromptSyncBudget {
		t.Fatalf("after the background sync, the expected sync is %v (%v)", d, ok)
	}
}

// At a size whose walk fits the budget (the index's last walk says so),
// the hook syncs in process: a leaf written by hand is found by the next
// prompt at once, and no background sync is started.
func TestPromptContextSyncsWithinTheBudget(t *testing.T) {
	k, _ := promptKB(t)
	ctx := context.Background()
	if _, err := PromptContextText(ctx, k, "payment retry", Options{}); err != nil {
		t.Fatal(err)
	}
	if d, ok := expectedSync(t, k); !ok || d >= Defaults().PromptSyncBudget {
		t.Fatalf("the expected sync of a small tree is %v (%v)", d, ok)
	}
	started := false
	exe := func() (string, error) { started = true; return "", fmt.Errorf("no background sync expected") }
	writeFile(t, k.NodePath("security/practice-rotate-signing-keys.md"), rotateLeaf)
	if got := promptOut(t, k, "how do we rotate the signing keys?", exe); !strings.Contains(got, "Rotate signing keys every quarter (.ai/kenkeep/nodes/security/practice-rotate-signing-keys.md)") {
		t.Fatalf("the leaf written by hand is not found at once:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(k.StateDir(), "prompt-sync")); err == nil || started {
		t.Fatal("a background sync was started")
	}
	if ds := diagnostics(t, k); len(ds) != 0 {
		t.Fatalf("diagnostics %+v", ds)
	}
}
