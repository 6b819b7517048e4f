package serve

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/store"
)

// endsWhen is a context that ends (canceled) once its file exists, as
// the signal's context of kk serve ends when SIGTERM comes at that point
// of a start; it ends when a caller next asks (Done, Err).
type endsWhen struct {
	context.Context
	file string
	once sync.Once
	done chan struct{}
}

func newEndsWhen(file string) *endsWhen {
	return &endsWhen{Context: context.Background(), file: file, done: make(chan struct{})}
}

func (c *endsWhen) Done() <-chan struct{} {
	if _, err := os.Stat(c.file); err == nil {
		c.once.Do(func() { close(c.done) })
	}
	return c.done
}

func (c *endsWhen) Err() error {
	select {
	case <-c.Done():
		return context.Canceled
	default:
		return nil
	}
}

// TestBootstrapIsNeverLeftHalfway: a stop (SIGTERM, Ctrl-C) that comes
// while kk serve sets a new folder up (after git init, after kk init,
// during the first commit) never leaves the setup halfway: the folder
// gets its knowledge base and its one commit, the work tree clean. Found
// by the serve red team, round 5: SIGTERM 80 ms after the start of kk
// serve on a new folder killed the bootstrap's git commit ("committing
// the new knowledge base: git … commit …: signal: terminated", exit 1),
// leaving the scaffold staged and never committed; the next start served
// it so, with no commit.
func TestBootstrapIsNeverLeftHalfway(t *testing.T) {
	needGit(t)
	for _, at := range []string{".git", filepath.Join(store.DirName, "config.yaml")} {
		t.Run(at, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "new")
			stop := newEndsWhen(filepath.Join(root, at))
			k, err := Bootstrap(stop, root, store.InitOptions{Version: "test", Now: time.Now(), Command: "test"})
			if err != nil {
				t.Fatalf("a stop once %s was made: %v", at, err)
			}
			if stop.Err() == nil {
				t.Fatal("the stop never came")
			}
			if !k.Initialized() {
				t.Error("no knowledge base")
			}
			if log := git(t, k, "log", "--format=%s"); log != BootstrapSubject {
				t.Errorf("history %q; want the one bootstrap commit", log)
			}
			if st := git(t, k, "status", "--porcelain"); st != "" {
				t.Errorf("the work tree is not clean:\n%s", st)
			}
		})
	}
}

// TestTwoStartsOnANewFolder: two kk serve started at once on the same
// new folder (a service and a person, two terminals) set it up once: one
// git init, one kk init, one commit; neither fails for the other's setup
// (the second then finds the first serving, which Open says). Found by
// the serve red team, round 5: two bootstrap commits, or the second
// failing with "git init: could not lock config file …", "cannot copy
// …/hooks/…" or "… is not empty and not in a git repository".
func TestTwoStartsOnANewFolder(t *testing.T) {
	needGit(t)
	for round := range 8 {
		root := filepath.Join(t.TempDir(), "new")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = Bootstrap(context.Background(), root, store.InitOptions{Version: "test", Now: time.Now(), Command: "test"})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d, start %d: %v", round, i, err)
			}
		}
		k := store.New(root)
		if log := git(t, k, "log", "--format=%s"); log != BootstrapSubject {
			t.Errorf("round %d: history %q; want the one bootstrap commit", round, log)
		}
		if st := git(t, k, "status", "--porcelain"); st != "" {
			t.Errorf("round %d: the work tree is not clean:\n%s", round, st)
		}
	}
}
