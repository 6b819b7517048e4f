// Package store is the knowledge base on disk: finding it, its paths and
// configuration, reading its tree of leaves (one scanner, one leaf cache,
// one racy window), redirects and folder summaries, and the per-knowledge-
// base process caches. Every change of the tree goes through internal/txn.
package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/lock"
)

// DirName is the knowledge base folder inside a repository.
const DirName = ".ai/kenkeep"

// ErrNotFound is returned when no knowledge base is found.
var ErrNotFound = errors.New("no knowledge base found")

// KB is a knowledge base rooted in a repository.
type KB struct {
	Root string // the repository folder holding .ai/kenkeep
	Dir  string // Root/.ai/kenkeep
	// Now is the clock for timestamps kk records; nil means time.Now.
	Now func() time.Time
	// LockWait is how long a writer waits for another writer's lock
	// before it gives up with a lock.HeldError; zero means
	// lock.DefaultWait.
	LockWait time.Duration
	// AfterWrite, when set, runs after each changeset the transaction
	// commits, still under the writer lock: what a face sets up around
	// the tree once it is written to (the CLI: a clone's git hooks and
	// merge drivers, githooks.SetUpClone). It is not the write's: what it
	// fails to do it reports itself.
	AfterWrite func(ctx context.Context)

	memo *memo // process caches, shared by copies of this value
}

// Time is the knowledge base's clock: Now when set, else time.Now.
func (k *KB) Time() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

// WriterWait is how long a writer of k waits for the writer lock.
func (k *KB) WriterWait() time.Duration {
	if k.LockWait > 0 {
		return k.LockWait
	}
	return lock.DefaultWait
}

// New returns the KB of the repository at root, whether or not it exists yet.
func New(root string) *KB {
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = root
	}
	return &KB{Root: abs, Dir: filepath.Join(abs, filepath.FromSlash(DirName)), memo: newMemo()}
}

// Find walks up from start to the first folder holding .ai/kenkeep.
func Find(start string) (*KB, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return nil, err
	}
	for {
		if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(DirName))); err == nil && fi.IsDir() {
			return New(dir), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, fmt.Errorf("%w in %s or any parent folder; run `kk init` in the repository root, or pass --root", ErrNotFound, start)
		}
		dir = parent
	}
}

// Paths of the files and folders of a knowledge base.
func (k *KB) NodesDir() string      { return filepath.Join(k.Dir, "nodes") }
func (k *KB) StateDir() string      { return filepath.Join(k.Dir, ".state") }
func (k *KB) ConfigPath() string    { return filepath.Join(k.Dir, "config.yaml") }
func (k *KB) EntryPath() string     { return filepath.Join(k.Dir, "ENTRY.md") }
func (k *KB) GraphPath() string     { return filepath.Join(k.Dir, "GRAPH.md") }
func (k *KB) SummariesPath() string { return filepath.Join(k.Dir, "FOLDER_SUMMARIES.md") }
func (k *KB) InstalledPath() string { return filepath.Join(k.Dir, ".state", "installed-version") }
func (k *KB) RedirectsPath() string { return filepath.Join(k.Dir, "nodes", ".redirects.json") }
func (k *KB) ConflictsDir() string  { return filepath.Join(k.Dir, "conflicts") }
func (k *KB) SessionsDir() string   { return filepath.Join(k.Dir, "_sessions") }
func (k *KB) GitignorePath() string { return filepath.Join(k.Dir, ".gitignore") }
func (k *KB) GitattributesPath() string {
	return filepath.Join(k.Dir, ".gitattributes")
}
func (k *KB) KKIgnorePath() string   { return filepath.Join(k.Root, ".kkignore") }
func (k *KB) AgentsPath() string     { return filepath.Join(k.Root, "AGENTS.md") }
func (k *KB) PromptsDir() string     { return filepath.Join(k.Dir, ".config", "prompts") }
func (k *KB) LogsDir() string        { return filepath.Join(k.Dir, "_logs") }
func (k *KB) Initialized() bool      { _, err := os.Stat(k.InstalledPath()); return err == nil }
func (k *KB) Rel(path string) string { return RelTo(k.Root, path) }
func (k *KB) NodePath(rel string) string {
	return filepath.Join(k.NodesDir(), filepath.FromSlash(rel))
}

// ignoredByGit are the entries of the knowledge base's folder that git
// ignores (.gitignore, kk's local state and logs): git leaves them behind
// when it checks out a commit or branch without a knowledge base, or when
// the knowledge base is removed with git rm -r.
var ignoredByGit = []string{".state", "_sessions", "_logs", "hooks"}

// Leftovers returns the names of the entries of k's folder when it holds
// nothing but what git ignores (ignoredByGit) and k is not initialized:
// what git left behind of a knowledge base, not one. Nil otherwise (k is
// initialized, or being set up, or its folder is empty or missing).
func (k *KB) Leftovers() []string {
	if k.Initialized() {
		return nil
	}
	entries, err := os.ReadDir(k.Dir)
	if err != nil {
		return nil
	}
	var left []string
	for _, e := range entries {
		if !slices.Contains(ignoredByGit, e.Name()) {
			return nil
		}
		left = append(left, e.Name())
	}
	return left
}

// LockPath is the writer lock's file under .state/, the only one older kk
// binaries lock; WriterLock is the whole lock.
func (k *KB) LockPath() string { return k.WriterLock().Path }

// WriterLock is the files of the writer lock that every write of the
// knowledge base takes (internal/txn: Update, Locked).
func (k *KB) WriterLock() lock.Set { return k.Locks("lock") }

// Locks decides where kk's lock named name (a slash-separated path under
// .state/: "lock", "serve.lock", …) is kept; every lock of a knowledge
// base is taken through it. Its Path is .state/<name>, the one file older
// kk binaries lock. In a git work tree (found from the file system alone,
// without starting git, whatever GIT_DIR says, so that every process
// agrees) its Guard is the same path under the work tree's own git
// folder, <git-dir>/kenkeep/<the knowledge base folder relative to the
// work tree>/<name>, a name ending in .lock ending in .flock there (git,
// and the tools around it, take *.lock files under the git folder for the
// lock files a git command left): .state/ is ignored by git, so `git clean -fdx` deletes
// it, lock files included, while a process holds them, and the next
// process would lock a new file beside them; git clean never touches the
// git folder. A linked worktree and a submodule have a git folder of their
// own, so each work tree's knowledge base has its own lock.
func (k *KB) Locks(name string) lock.Set {
	s := lock.Set{Path: filepath.Join(k.StateDir(), filepath.FromSlash(name))}
	if top, gitDir, ok := gitx.WorkTreeGitDir(k.Root); ok {
		if rel, err := filepath.Rel(top, k.Dir); err == nil && filepath.IsLocal(rel) {
			if base, ok := strings.CutSuffix(name, ".lock"); ok {
				name = base + ".flock"
			}
			s.Guard = filepath.Join(gitDir, "kenkeep", rel, filepath.FromSlash(name))
		}
	}
	return s
}

func RelTo(base, path string) string {
	r, err := filepath.Rel(base, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

// JoinRel joins a folder relative to nodes/ ("" for nodes/ itself) and a
// name below it.
func JoinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// CheckFolder makes sure no segment of folder is an existing file or a
// symlink leading out of the tree.
func (k *KB) CheckFolder(folder string) error {
	if folder == "" {
		return nil
	}
	p := k.NodesDir()
	for _, seg := range strings.Split(folder, "/") {
		p = filepath.Join(p, seg)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("folder %q: %s is a symlink; kk writes only into real folders inside nodes/", folder, k.Rel(p))
		}
		if !fi.IsDir() {
			return fmt.Errorf("folder %q: %s is a file, not a folder", folder, k.Rel(p))
		}
	}
	return nil
}

// CheckContained makes sure the folders a write goes into (.ai,
// .ai/kenkeep, its nodes/, conflicts/, _sessions/, .state/ and _logs/) are
// inside the repository: each is
// repository content, so a symlink at one of them that leads out of the
// repository (a cloned repository's .ai linked to a person's home) would
// make kk write there. The repository folder itself may be reached
// through a symlink. Every write checks it before it takes the writer
// lock, whose file is under .state/; so do the hooks and the opening of
// a branch's index (under .state/), which write without it.
func (k *KB) CheckContained() error {
	realRoot, err := filepath.EvalSymlinks(k.Root)
	if err != nil {
		return fmt.Errorf("resolving the repository folder %s: %w", k.Root, err)
	}
	for _, dir := range []string{k.NodesDir(), k.ConflictsDir(), k.SessionsDir(), k.StateDir(), k.LogsDir()} {
		rel, err := filepath.Rel(k.Root, dir)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		p := k.Root
		for _, seg := range strings.Split(rel, string(filepath.Separator)) {
			p = filepath.Join(p, seg)
			fi, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			if err != nil {
				return err
			}
			if fi.Mode()&fs.ModeSymlink == 0 {
				continue
			}
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				return fmt.Errorf("writing into %s crosses the symlink %s, which kk cannot follow (%v); make %s a real folder, then run kk again", k.Rel(dir), k.Rel(p), err, k.Rel(p))
			}
			if r, err := filepath.Rel(realRoot, target); err != nil || !filepath.IsLocal(r) {
				return fmt.Errorf("writing into %s crosses the symlink %s, which leads out of the repository (to %s); kk writes only inside the repository: make %s a real folder, then run kk again", k.Rel(dir), k.Rel(p), target, k.Rel(p))
			}
		}
	}
	return nil
}
