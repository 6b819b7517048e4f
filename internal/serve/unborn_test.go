package serve

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// A repository that was never committed (git init, kk init, no commit
// yet) is served with kk's scaffold in its first commit: a clone of the
// branch has config.yaml, .gitignore and the rest of what kk init made
// under .ai/kenkeep, and its .kkignore (left untracked before, where a
// repository with commits set up by kk serve has it committed), and
// passes kk index rebuild --check; a person's
// other uncommitted files (a file of the project, a staged one, a leaf
// written by hand) stay out of every commit, as they were. Found by a QA
// run: the clone of such a repository had the leaf and the index files,
// and no config.yaml.
func TestUnbornRepositoryFirstCommitCarriesTheScaffold(t *testing.T) {
	needGit(t)
	root := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := gitx.Run(ctx, root, "init", "-q", "-b", "main"); err != nil {
		t.Fatal(err)
	}
	opts := store.InitOptions{Version: "test", Now: time.Now(), Command: "kk init"}
	k := store.New(root)
	if _, err := txn.Init(ctx, k, opts); err != nil { // kk init
		t.Fatal(err)
	}
	// A person's work, not committed: a project file, one staged, and
	// a leaf written by hand.
	for name, text := range map[string]string{"main.go": "package main\n", "staged.txt": "staged\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, k, "add", "staged.txt")
	hand := k.NodePath("hand/map-by-hand.md")
	if err := os.MkdirAll(filepath.Dir(hand), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hand, []byte("---\nid: map-by-hand\ntitle: By hand\ntype: map\n---\nWritten by hand.\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	k, err := Bootstrap(ctx, root, opts) // kk serve's start
	if err != nil {
		t.Fatal(err)
	}
	s := startOpts(t, context.Background(), Options{KB: k})
	j := s.post(t, httpapi.PostRequest{Title: "First note", Content: "The first note of a new repository.\n"})
	if j.Status != "done" {
		t.Fatalf("the first post: %+v", j)
	}
	jobCommit(t, k, "store", j)

	committed := strings.Split(git(t, k, "ls-tree", "-r", "--name-only", "HEAD"), "\n")
	for _, want := range []string{".ai/kenkeep/config.yaml", ".ai/kenkeep/.gitignore", ".ai/kenkeep/.gitattributes", ".ai/kenkeep/README.md", ".ai/kenkeep/FOLDER_SUMMARIES.md", ".ai/kenkeep/.state/installed-version", ".kkignore"} {
		if !slices.Contains(committed, want) {
			t.Errorf("%s is not committed; HEAD holds %v", want, committed)
		}
	}
	for _, never := range []string{"main.go", "staged.txt", ".ai/kenkeep/nodes/hand/map-by-hand.md"} {
		if slices.Contains(committed, never) {
			t.Errorf("a person's uncommitted %s was committed", never)
		}
	}
	if st := git(t, k, "status", "--porcelain", "--", "main.go", "staged.txt", ".ai/kenkeep/nodes/hand"); !strings.Contains(st, "?? main.go") || !strings.Contains(st, "A  staged.txt") || !strings.Contains(st, "?? .ai/kenkeep/nodes/hand/") {
		t.Errorf("a person's uncommitted files are not as they were:\n%s", st)
	}
	if st := git(t, k, "status", "--porcelain", "--", ".ai/kenkeep"); st != "?? .ai/kenkeep/nodes/hand/" {
		t.Errorf("under .ai/kenkeep, git status shows more than the leaf written by hand:\n%s", st)
	}
	if st := git(t, k, "status", "--porcelain", "--", ".kkignore"); st != "" {
		t.Errorf("kk init's .kkignore is not committed as the work tree holds it:\n%s", st)
	}
	headChecks(t, k)
	clone := filepath.Join(t.TempDir(), "clone")
	if _, err := gitx.Run(ctx, root, "clone", "-q", root, clone); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(store.New(clone).ConfigPath()); err != nil || !store.New(clone).Initialized() {
		t.Errorf("the clone is not a knowledge base kk init made: %v", err)
	}
}

// A repository with commits whose setup by kk serve was cut before its
// commit (kk serve killed while the commit's git add hung: kk init's
// scaffold is in the work tree, never committed) is served with the
// scaffold in its first job's commit, as a repository never committed
// is: the scaffold stayed out of every commit, .ai/kenkeep/.state/ and
// the rest of kk init's files showed untracked for ever, and a clone
// of the branch had no config.yaml. Found by the serve red team, round 8
// (kill -9 during a hanging setup).
func TestSetupCutBeforeItsCommitFirstJobCarriesTheScaffold(t *testing.T) {
	needGit(t)
	root := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := gitx.Run(ctx, root, "init", "-q", "-b", "main"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("A project.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k := store.New(root)
	git(t, k, "add", "README.md")
	git(t, k, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-q", "-m", "first")
	opts := store.InitOptions{Version: "test", Now: time.Now(), Command: "kk serve"}
	if _, err := txn.Init(ctx, k, opts); err != nil { // the setup, cut before its commit
		t.Fatal(err)
	}
	k, err := Bootstrap(ctx, root, opts) // the next start
	if err != nil {
		t.Fatal(err)
	}
	s := startOpts(t, context.Background(), Options{KB: k})
	j := s.post(t, httpapi.PostRequest{Title: "First note", Content: "The first note after a cut setup.\n"})
	if j.Status != "done" {
		t.Fatalf("the first post: %+v", j)
	}
	jobCommit(t, k, "store", j)
	committed := strings.Split(git(t, k, "ls-tree", "-r", "--name-only", "HEAD"), "\n")
	for _, want := range []string{".ai/kenkeep/config.yaml", ".ai/kenkeep/.gitignore", ".ai/kenkeep/.gitattributes", ".ai/kenkeep/README.md", ".ai/kenkeep/FOLDER_SUMMARIES.md", ".ai/kenkeep/.state/installed-version", ".kkignore"} {
		if !slices.Contains(committed, want) {
			t.Errorf("%s is not committed; HEAD holds %v", want, committed)
		}
	}
	if st := git(t, k, "status", "--porcelain"); st != "" {
		t.Errorf("git status after the first job:\n%s", st)
	}
	headChecks(t, k)
}

// The first job's commit carries kk init's .kkignore only when the
// branch does not hold one: a person's committed .kkignore, into which
// kk init put its block, is theirs to commit, as kk serve's own setup
// leaves it (it commits .kkignore only when it made the file).
func TestFirstJobLeavesAPersonsCommittedKKIgnore(t *testing.T) {
	needGit(t)
	root := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := gitx.Run(ctx, root, "init", "-q", "-b", "main"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".kkignore"), []byte("vendor/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k := store.New(root)
	git(t, k, "add", ".kkignore")
	git(t, k, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-q", "-m", "first")
	opts := store.InitOptions{Version: "test", Now: time.Now(), Command: "kk init"}
	if _, err := txn.Init(ctx, k, opts); err != nil { // kk init, not committed
		t.Fatal(err)
	}
	k, err := Bootstrap(ctx, root, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := startOpts(t, context.Background(), Options{KB: k})
	j := s.post(t, httpapi.PostRequest{Title: "First note", Content: "The first note.\n"})
	if j.Status != "done" {
		t.Fatalf("the first post: %+v", j)
	}
	jobCommit(t, k, "store", j)
	if got := git(t, k, "show", "HEAD:.kkignore"); got != "vendor/" {
		t.Errorf("HEAD's .kkignore is %q, the person's was vendor/", got)
	}
	if st := git(t, k, "status", "--porcelain"); st != "M .kkignore" {
		t.Errorf("git status after the first job: %q (want the person's .kkignore modified by kk init, uncommitted)", st)
	}
}
