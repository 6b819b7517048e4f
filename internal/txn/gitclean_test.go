package txn_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// runPausedWriter starts the first writer of lockdirChildEnv on k (a
// transaction writing the leaf "First writer" that pauses once every file
// is applied), runs clean while it is paused (given the writer's pid), lets
// it go on, and returns its standard error and error. A clean that fails
// the test lets the writer go too.
func runPausedWriter(t *testing.T, k *store.KB, clean func(pid int)) (string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(exe, "-test.run=^$")
	child.Env = append(os.Environ(), lockdirChildEnv+"="+k.Root)
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	defer func() {
		if !waited {
			_ = stdin.Close()
			_ = child.Wait()
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("the first writer did not reach its pause: %q %v; stderr %s", line, err, stderr.String())
	}
	clean(child.Process.Pid)
	_ = stdin.Close()
	waited = true
	err = child.Wait()
	return stderr.String(), err
}

// `git clean -fdX` (the ignored files only: .ai/kenkeep/.state, the
// journal folder with it) run while a write is between applying its files
// and dropping its journal: the write's files are all in place, and the
// journal it was about to remove is gone. The write failed with "syncing
// .state/txn: no such file or directory" after undoing itself; a journal
// gone is a changeset committed, so it now succeeds, and its leaf stays.
func TestGitCleanIgnoredWhileAWriteCommits(t *testing.T) {
	k := gitKB(t, filepath.Join(t.TempDir(), "proj"))
	stderr, err := runPausedWriter(t, k, func(int) { git(t, k.Root, "clean", "-fdXq") })
	if err != nil {
		t.Fatalf("the write, after git clean -fdX removed .state while it ran: %v; %s", err, stderr)
	}
	leaves, _ := filepath.Glob(filepath.Join(k.Dir, "nodes", "*first-writer*.md"))
	if len(leaves) != 1 {
		t.Fatalf("the write's leaf: found %v, want one", leaves)
	}
	if left, _ := os.ReadDir(txn.JournalDir(k)); len(left) != 0 {
		t.Errorf("the journal folder holds %d file(s) after the write", len(left))
	}
	if err := writeLeaf(k, 10*time.Second, "Second writer"); err != nil {
		t.Fatalf("the next write: %v", err)
	}
}

// `git clean -fdx` removes the new leaf as well (it is not tracked yet):
// the write still ends without an error about its journal folder, and the
// next write goes through.
func TestGitCleanAllWhileAWriteEnds(t *testing.T) {
	k := gitKB(t, filepath.Join(t.TempDir(), "proj"))
	stderr, err := runPausedWriter(t, k, func(int) { git(t, k.Root, "clean", "-fdxq") })
	if err != nil {
		t.Fatalf("the write, after git clean -fdx removed .state while it ran: %v; %s", err, stderr)
	}
	if err := writeLeaf(k, 10*time.Second, "Second writer"); err != nil {
		t.Fatalf("the next write: %v", err)
	}
}

// `git clean -fdX` while a write that keeps its originals (kk serve's
// job: Tx.KeepOriginals) is between applying its files and moving its
// journal among the kept ones: the journal is gone, and the move failed,
// which undid the write (its new leaf lost). The write now commits, and
// its originals are kept still (written again from the transaction's
// memory), so that the job can still be undone.
func TestGitCleanWhileAKeptJournalIsWritten(t *testing.T) {
	k := gitKB(t, filepath.Join(t.TempDir(), "proj"))
	t.Setenv(keepEnv, "job-1")
	stderr, err := runPausedWriter(t, k, func(int) { git(t, k.Root, "clean", "-fdXq") })
	if err != nil {
		t.Fatalf("the write, after git clean -fdX removed .state while it ran: %v; %s", err, stderr)
	}
	leaves, _ := filepath.Glob(filepath.Join(k.Dir, "nodes", "*first-writer*.md"))
	if len(leaves) != 1 {
		t.Fatalf("the write's leaf: found %v, want one", leaves)
	}
	if !txn.HasOriginals(k, "job-1") {
		t.Fatalf("no originals kept under job-1 after the write")
	}
	if _, err := txn.Update(context.Background(), k, txn.Meta{Command: "undo job-1"}, func(tx *txn.Tx) error {
		_, err := tx.RestoreOriginals("job-1")
		return err
	}); err != nil {
		t.Fatalf("undoing the job: %v", err)
	}
	if leaves, _ := filepath.Glob(filepath.Join(k.Dir, "nodes", "*first-writer*.md")); len(leaves) != 0 {
		t.Errorf("the undo left %v", leaves)
	}
}

// `git clean -fdX` between the creation of the journal folder and the
// journal's write: the write failed ("journal: open …: no such file or
// directory") before changing anything; it makes the folder again now.
func TestGitCleanBeforeTheJournalIsWritten(t *testing.T) {
	k := gitKB(t, filepath.Join(t.TempDir(), "proj"))
	t.Setenv(pauseEnv, "journal")
	stderr, err := runPausedWriter(t, k, func(int) { git(t, k.Root, "clean", "-fdXq") })
	if err != nil {
		t.Fatalf("the write, after git clean -fdX removed .state while it ran: %v; %s", err, stderr)
	}
	leaves, _ := filepath.Glob(filepath.Join(k.Dir, "nodes", "*first-writer*.md"))
	if len(leaves) != 1 {
		t.Fatalf("the write's leaf: found %v, want one", leaves)
	}
	if left, _ := os.ReadDir(txn.JournalDir(k)); len(left) != 0 {
		t.Errorf("the journal folder holds %d file(s) after the write", len(left))
	}
}
