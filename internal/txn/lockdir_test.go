package txn_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/lock"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// lockdirChildEnv makes the test binary the first writer of
// TestGitCleanDoesNotLetASecondWriterIn: a transaction of the knowledge
// base at its value that stops once every file is applied ("applied"),
// says "held" on its standard output, and goes on when its standard input
// closes.
const lockdirChildEnv = "KK_TEST_LOCKDIR_WRITER"

// The first writer pauses at the commit point named by pauseEnv instead
// of "applied", and keeps its originals (Tx.KeepOriginals) under the name
// keepEnv gives, when set.
const (
	pauseEnv = "KK_TEST_LOCKDIR_PAUSE"
	keepEnv  = "KK_TEST_LOCKDIR_KEEP"
)

func init() {
	root := os.Getenv(lockdirChildEnv)
	if root == "" {
		return
	}
	k := store.New(root)
	pause := os.Getenv(pauseEnv)
	if pause == "" {
		pause = "applied"
	}
	paused := txn.WithFaults(context.Background(), txn.Faults{At: func(p string) {
		if p == pause {
			fmt.Println("held")
			_, _ = io.Copy(io.Discard, os.Stdin)
		}
	}})
	_, err := txn.Update(paused, k, txn.Meta{Command: "kk node write (first writer)"}, func(tx *txn.Tx) error {
		if name := os.Getenv(keepEnv); name != "" {
			tx.KeepOriginals(name)
		}
		_, _, err := curate.WriteInTx(tx, contracts.NodeInput{Type: "practice", Title: "First writer", Description: "d", Body: "b"}, curate.WriteOptions{})
		return err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "first writer:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// git runs git in dir, failing the test with its output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cmd := exec.Command("git", append([]string{"-c", "user.name=kk test", "-c", "user.email=test@kk.invalid", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// gitKB makes a repository at root holding a knowledge base, committed.
func gitKB(t *testing.T, root string) *store.KB {
	t.Helper()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, root, "init", "-q")
	k := store.New(root)
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "test", Command: "test"}); err != nil {
		t.Fatal(err)
	}
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "kk init")
	return k
}

// writeLeaf writes one leaf in a transaction of k, waiting wait at most
// for the writer lock.
func writeLeaf(k *store.KB, wait time.Duration, title string) error {
	kk := *k
	kk.LockWait = wait
	_, err := txn.Update(context.Background(), &kk, txn.Meta{Command: "kk node write (second writer)"}, func(tx *txn.Tx) error {
		_, _, err := curate.WriteInTx(tx, contracts.NodeInput{Type: "practice", Title: title, Description: "d", Body: "b"}, curate.WriteOptions{})
		return err
	})
	return err
}

// `git clean -fdx` while a writer holds the lock deletes .state/, the
// lock file with it; the next writer must still wait for the first one
// (here: give up saying who holds it), not take a new file beside it.
func TestGitCleanDoesNotLetASecondWriterIn(t *testing.T) {
	k := gitKB(t, filepath.Join(t.TempDir(), "proj"))
	stderr, err := runPausedWriter(t, k, func(pid int) {
		git(t, k.Root, "clean", "-fdxq")
		if _, err := os.Stat(k.LockPath()); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("git clean -fdx left %s (%v); the test needs it gone", k.LockPath(), err)
		}

		err := writeLeaf(k, 300*time.Millisecond, "Second writer")
		var held *lock.HeldError
		if !errors.As(err, &held) {
			t.Fatalf("a second writer after git clean -fdx: got %v, want it to find the first writer's lock held", err)
		}
		if guard := k.WriterLock().Guard; held.Path != guard || guard == "" {
			t.Errorf("the lock error names the file %s, want the guard under the git folder, %q", held.Path, guard)
		}
		if held.Holder == nil || held.Holder.PID != pid || held.Holder.Command != "kk node write (first writer)" {
			t.Errorf("the lock error names %+v, want the first writer (pid %d): %v", held.Holder, pid, err)
		}
	})
	if err != nil {
		t.Logf("the first writer, after git clean removed its journal: %v; %s", err, stderr)
	}
	if err := writeLeaf(k, 10*time.Second, "Second writer"); err != nil {
		t.Fatalf("the second writer once the first was done: %v", err)
	}
}

// An older kk (a teammate's hook, a kk serve started before the upgrade)
// locks .state/lock alone: a writer still waits for it, and names it.
func TestOlderKKsLockStillExcludes(t *testing.T) {
	k := gitKB(t, filepath.Join(t.TempDir(), "proj"))
	old, err := lock.Acquire(context.Background(), k.LockPath(), time.Second, "kk serve (older kk)")
	if err != nil {
		t.Fatal(err)
	}
	err = writeLeaf(k, 100*time.Millisecond, "Blocked")
	var held *lock.HeldError
	if !errors.As(err, &held) || held.Path != k.LockPath() || held.Holder == nil || held.Holder.Command != "kk serve (older kk)" {
		t.Fatalf("a write while an older kk holds .state/lock: %v, want it held, naming that file and holder", err)
	}
	// The writer let its guard go when it gave up: the older kk's
	// release is all the next writer needs.
	if err := old.Release(); err != nil {
		t.Fatal(err)
	}
	if err := writeLeaf(k, time.Second, "Free"); err != nil {
		t.Fatal(err)
	}
}

// Two worktrees of one repository each have their own knowledge base and
// their own git folder, so their writers do not wait for each other.
func TestLinkedWorktreesHaveTheirOwnLocks(t *testing.T) {
	base := t.TempDir()
	primary := gitKB(t, filepath.Join(base, "main"))
	wt := filepath.Join(base, "wt")
	git(t, primary.Root, "worktree", "add", "-q", wt)
	linked := store.New(wt)
	if primary.WriterLock().Guard == "" || linked.WriterLock().Guard == "" || primary.WriterLock().Guard == linked.WriterLock().Guard {
		t.Fatalf("guards %q and %q: want one under each worktree's git folder", primary.WriterLock().Guard, linked.WriterLock().Guard)
	}
	held, err := primary.WriterLock().Acquire(context.Background(), time.Second, "kk node write (main)")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Release() }()
	if err := writeLeaf(linked, 100*time.Millisecond, "In the linked worktree"); err != nil {
		t.Fatalf("a write in the linked worktree while the main one's lock is held: %v", err)
	}
	var herr *lock.HeldError
	if err := writeLeaf(primary, 100*time.Millisecond, "In the main worktree"); !errors.As(err, &herr) {
		t.Fatalf("a second write in the main worktree: %v, want it held", err)
	}
}

// Outside git the writer lock is .state/lock alone, as before.
func TestWriterLockOutsideGit(t *testing.T) {
	k := store.New(filepath.Join(t.TempDir(), "proj"))
	if err := os.MkdirAll(k.Root, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "test", Command: "test"}); err != nil {
		t.Fatal(err)
	}
	if g := k.WriterLock().Guard; g != "" {
		t.Fatalf("a knowledge base outside git has a guard %s", g)
	}
	held, err := k.WriterLock().Acquire(context.Background(), time.Second, "kk node write (first)")
	if err != nil {
		t.Fatal(err)
	}
	var herr *lock.HeldError
	if err := writeLeaf(k, 100*time.Millisecond, "Second"); !errors.As(err, &herr) || herr.Path != k.LockPath() {
		t.Fatalf("a second writer: %v, want .state/lock held", err)
	}
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	if err := writeLeaf(k, time.Second, "Second"); err != nil {
		t.Fatal(err)
	}
}
