//go:build unix

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// killKB is a knowledge base in a temporary folder that tests drive with
// the kk command (the test binary, which testscript.Main puts on PATH as
// kk) as separate processes.
type killKB struct {
	t    *testing.T
	root string
	k    *store.KB
}

func newKillKB(t *testing.T) *killKB {
	t.Helper()
	root := t.TempDir()
	kb := &killKB{t: t, root: root, k: store.New(root)}
	kb.run("", "init")
	return kb
}

// command returns the kk process for args in the knowledge base.
func (kb *killKB) command(stdin string, args ...string) *exec.Cmd {
	cmd := exec.Command("kk", append([]string{"--root", kb.root}, args...)...)
	cmd.Env = append(os.Environ(), "KK_ROOT=", "KK_GIT_HOOKS=off")
	cmd.Stdin = strings.NewReader(stdin)
	return cmd
}

func (kb *killKB) run(stdin string, args ...string) string {
	kb.t.Helper()
	out, err := kb.command(stdin, args...).CombinedOutput()
	if err != nil {
		kb.t.Fatalf("kk %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// killWriter is one kind of writer the kill test interrupts.
type killWriter struct {
	name  string
	start func(i int) *exec.Cmd
	// whole checks that writer i's changeset is in the tree whole or not
	// at all; it returns whether it is there.
	whole func(t *testing.T, i int) bool
	// audited matches an operation of writer i's audit record.
	audited func(op index.AuditOp, i int) bool
}

// TestKillWriters kills writers with SIGKILL at random points, 100 times,
// across kk node write, a 20-entity kb_upsert and kk pack import. After
// each kill the next reader rolls back whatever the killed writer left
// half-done: every changeset is then present whole or not at all, every
// leaf parses, a changeset that is present has its audit record, and
// after the next write (which must succeed) no temporary file, journal or
// staging folder is left.
func TestKillWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 100 writer processes (about a minute); run without -short")
	}
	kb := newKillKB(t)
	// A pack of 30 leaves to import again and again under new names.
	src := newKillKB(t)
	for i := range 30 {
		src.run(fmt.Sprintf("Body of pack leaf %d.\n", i), "node", "write", "practice", fmt.Sprintf("pack leaf %d", i),
			"--summary", "a leaf of the pack", "--folder", fmt.Sprintf("topic%d", i%3), "--no-index")
	}
	src.run("", "index", "rebuild")
	pack := filepath.Join(t.TempDir(), "team-pack")
	src.run("", "pack", "export", "--name", "team", "--version", "1.0.0", "--summary", "a pack", "--out", pack)

	body := strings.Repeat("Knowledge that takes a while to write. ", 400)
	writers := []killWriter{
		{
			name: "node write",
			start: func(i int) *exec.Cmd {
				return kb.command(body, "node", "write", "practice", fmt.Sprintf("kill %d", i), "--summary", "written while killed")
			},
			whole: func(t *testing.T, i int) bool {
				data, err := os.ReadFile(kb.k.NodePath(fmt.Sprintf("practice-kill-%d.md", i)))
				if os.IsNotExist(err) {
					return false
				}
				if err != nil || !bytes.Contains(data, []byte(strings.TrimSpace(body))) {
					t.Fatalf("node write %d left a partial leaf: %v\n%.200s", i, err, data)
				}
				return true
			},
			audited: func(op index.AuditOp, i int) bool { return op.ID == fmt.Sprintf("practice-kill-%d", i) },
		},
		{
			name: "kb_upsert",
			start: func(i int) *exec.Cmd {
				return kb.command(changeset20(i), "upsert", "--input", "-")
			},
			whole: func(t *testing.T, i int) bool {
				present := 0
				for j := range 20 {
					data, err := os.ReadFile(kb.k.NodePath(fmt.Sprintf("requirements/K%d-%d.md", i, j)))
					if err == nil {
						present++
						if j > 0 && !bytes.Contains(data, []byte(fmt.Sprintf("to: K%d-%d", i, j-1))) {
							t.Fatalf("K%d-%d lost its edge:\n%s", i, j, data)
						}
					}
				}
				if present != 0 && present != 20 {
					t.Fatalf("changeset %d is half-applied: %d of 20 entities", i, present)
				}
				return present == 20
			},
			audited: func(op index.AuditOp, i int) bool { return op.ID == fmt.Sprintf("K%d-0", i) },
		},
		{
			name: "pack import",
			start: func(i int) *exec.Cmd {
				return kb.command("", "pack", "import", pack, "--as", fmt.Sprintf("imp%d", i))
			},
			whole: func(t *testing.T, i int) bool {
				var leaves []string
				if err := filepath.WalkDir(kb.k.NodePath(fmt.Sprintf("imp%d", i)), func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && d.Name() != "index.md" {
						leaves = append(leaves, p)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if len(leaves) != 0 && len(leaves) != 30 {
					t.Fatalf("pack import %d is half-applied: %d of 30 leaves", i, len(leaves))
				}
				return len(leaves) == 30
			},
			audited: func(op index.AuditOp, i int) bool { return strings.HasPrefix(op.Path, fmt.Sprintf("imp%d/", i)) },
		},
	}

	// How long each writer takes when left alone, to kill it anywhere in
	// its run.
	took := make([]time.Duration, len(writers))
	for w, wr := range writers {
		start := time.Now()
		cmd := wr.start(1000 + w)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", wr.name, err, out)
		}
		took[w] = time.Since(start)
		if !wr.whole(t, 1000+w) {
			t.Fatalf("%s left alone did not apply its changeset", wr.name)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	killed, applied, interrupted, rolledBack := 0, 0, 0, 0
	for i := range 100 {
		w := i % len(writers)
		wr := writers[w]
		cmd := wr.start(i)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.Int64N(int64(took[w]) * 6 / 5))
		time.Sleep(delay)
		if cmd.Process.Signal(syscall.SIGKILL) == nil {
			killed++
		}
		_ = cmd.Wait() // killed, or done: the check below says which

		// The next reader rolls back a half-applied changeset.
		if left, _ := txn.Leftovers(kb.k); len(left) > 0 {
			interrupted++
		}
		if did, err := txn.Recover(kb.k); did {
			rolledBack++
		} else if err != nil {
			t.Fatalf("kill %d (%s after %s): recovery: %v", i, wr.name, delay, err)
		}
		if _, err := kb.k.ReadTree(store.LoadOptions{}); err != nil {
			t.Fatalf("kill %d (%s after %s): the tree does not read: %v", i, wr.name, delay, err)
		}
		if wr.whole(t, i) {
			applied++
			if !auditHas(t, kb.k, func(op index.AuditOp) bool { return wr.audited(op, i) }) {
				t.Fatalf("kill %d (%s after %s): the changeset is in the tree but has no audit record", i, wr.name, delay)
			}
		}
		// The next write succeeds and leaves nothing behind.
		if i%10 == 9 || i == 99 {
			kb.run("", "index", "rebuild")
			if left, err := txn.Leftovers(kb.k); err != nil || len(left) != 0 {
				t.Fatalf("after the write following kill %d: leftovers %v, %v", i, left, err)
			}
			res, err := indexfiles.Check(context.Background(), kb.k)
			if err != nil || len(res.Changed)+len(res.Removed) != 0 {
				t.Fatalf("after the write following kill %d: index files stale: %+v, %v", i, res, err)
			}
		}
	}
	t.Logf("%d writers killed: %d changesets applied before their kill, %d kills left files behind, %d half-applied changesets rolled back", killed, applied, interrupted, rolledBack)
	kb.run("", "lint")
	kb.run("", "check")
}

// changeset20 is a kb_upsert changeset of 20 requirements, each depending
// on the one before.
func changeset20(i int) string {
	var ents, edges []map[string]any
	for j := range 20 {
		ents = append(ents, map[string]any{"id": fmt.Sprintf("K%d-%d", i, j), "type": "req", "title": fmt.Sprintf("Requirement %d of changeset %d", j, i), "priority": "should"})
		if j > 0 {
			edges = append(edges, map[string]any{"type": "depends_on", "from": fmt.Sprintf("K%d-%d", i, j), "to": fmt.Sprintf("K%d-%d", i, j-1)})
		}
	}
	data, _ := json.Marshal(map[string]any{"entities": ents, "edges": edges, "created_by": "kill-test", "source": fmt.Sprintf("changeset %d", i)})
	return string(data)
}

// auditHas reports whether an operation of the current branch's audit log
// matches.
func auditHas(t *testing.T, k *store.KB, match func(index.AuditOp) bool) bool {
	t.Helper()
	branch, err := index.CurrentBranch(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := index.ReadAudit(k, branch)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		for _, op := range r.Ops {
			if match(op) {
				return true
			}
		}
	}
	return false
}
