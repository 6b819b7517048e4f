package gitx

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var worker = Author{Name: "kk serve", Email: "kk-serve@kk.invalid"}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := Run(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func TestCommitPathsTouchesOnlyItsPaths(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	// The very first commit, on an unborn branch.
	write(t, dir, "notes/a.md", "a1")
	sha, err := CommitPaths(ctx, dir, worker, JobSubject("store", "j1", "notes/a.md"), []string{"notes/a.md"})
	if err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != sha {
		t.Fatalf("CommitPaths returned %s, HEAD is %s", sha, got)
	}

	// Another job's leftovers: a staged file and an unstaged change.
	write(t, dir, "other/staged.md", "x")
	gitOut(t, dir, "add", "other/staged.md")
	write(t, dir, "other/loose.md", "y")
	write(t, dir, "notes/b c*.md", "b")
	write(t, dir, "notes/a.md", "a2")
	if _, err := CommitPaths(ctx, dir, worker, JobSubject("store", "j2", "notes/b c*.md"), []string{"notes/b c*.md", "notes/a.md", "notes/never.md"}); err != nil {
		t.Fatal(err)
	}
	files := strings.Split(gitOut(t, dir, "show", "--name-only", "--format=", "HEAD"), "\n")
	if !slices.Equal(files, []string{"notes/a.md", "notes/b c*.md"}) {
		t.Errorf("the commit touched %q", files)
	}
	if got := gitOut(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s"); got != "kk serve <kk-serve@kk.invalid>|kk serve <kk-serve@kk.invalid>|store(j2): notes/b c*.md" {
		t.Errorf("author and subject: %q", got)
	}
	if got := gitOut(t, dir, "diff", "--cached", "--name-only"); got != "other/staged.md" {
		t.Errorf("the other job's staged file should stay staged and uncommitted; staged: %q", got)
	}

	// A deletion, and a job that changed nothing still leaves its record.
	if err := os.Remove(filepath.Join(dir, "notes", "a.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := CommitPaths(ctx, dir, worker, JobSubject("delete", "j3", "notes/a.md"), []string{"notes/a.md"}); err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, dir, "show", "--name-status", "--format=", "HEAD"); got != "D\tnotes/a.md" {
		t.Errorf("delete commit: %q", got)
	}
	if _, err := CommitPaths(ctx, dir, worker, JobSubject("edit", "j4", "notes/b c*.md"), []string{"notes/b c*.md"}); err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, dir, "log", "-1", "--format=%s"); got != "edit(j4): notes/b c*.md" {
		t.Errorf("unchanged edit: %q", got)
	}
	if got := gitOut(t, dir, "diff", "--cached", "--name-only"); got != "other/staged.md" {
		t.Errorf("staged after the empty commit: %q", got)
	}

	if _, err := CommitPaths(ctx, dir, Author{}, "x", nil); err == nil {
		t.Error("a commit with no author gave no error")
	}
	if _, err := CommitPaths(ctx, dir, worker, " ", nil); err == nil {
		t.Error("a commit with no message gave no error")
	}
}

func TestFindAndListJobCommits(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	if _, ok, err := FindJobCommit(ctx, dir, "j1", worker); err != nil || ok {
		t.Fatalf("no commits yet: ok %v, err %v", ok, err)
	}
	for _, c := range []struct{ op, id, path string }{
		{"store", "j1", "a/one.md"}, {"store", "j2", "a/two.md"}, {"edit", "j3", "a/one.md"}, {"store", "j10", "b/ten.md"},
	} {
		write(t, dir, c.path, c.id)
		if _, err := CommitPaths(ctx, dir, worker, JobSubject(c.op, c.id, c.path), []string{c.path}); err != nil {
			t.Fatal(err)
		}
	}
	// A person's commit that mentions a job id in passing is not the job's.
	write(t, dir, "x.md", "x")
	commit(t, dir, nil, "notes about store(j5): nothing\n\nsee store(j5): x.md")

	// A person's commits whose subjects copy a job's: one for a job that
	// has no commit of its own, one newer than a job's own commit. Their
	// author is the person's, not the worker's: they are not the job's
	// (recovery would take the job for committed, its files uncommitted).
	commit(t, dir, map[string]string{"c/six.md": "6"}, JobSubject("store", "j6", "c/six.md"))
	commit(t, dir, map[string]string{"c/fake.md": "f"}, JobSubject("store", "j1", "c/fake.md"))
	if c, ok, err := FindJobCommit(ctx, dir, "j6", worker); err != nil || ok {
		t.Errorf("a person's commit copying job j6's subject was taken for its commit: %+v %v %v", c, ok, err)
	}
	if _, _, err := FindJobCommit(ctx, dir, "j6", Author{}); err == nil {
		t.Error("FindJobCommit with no author gave no error")
	}
	// A .mailmap that names the worker otherwise (git log's --author
	// matches the mapped name once log.mailmap is on, git's default)
	// changes nothing: the commits are the worker's as made.
	write(t, dir, ".mailmap", "Our Bot <bot@example.invalid> <"+worker.Email+">\n")
	c, ok, err := FindJobCommit(ctx, dir, "j1", worker)
	if err != nil || !ok || c.Op != "store" || c.Path != "a/one.md" || c.ID != "j1" || c.Hash == "" || c.Time.IsZero() {
		t.Errorf("FindJobCommit(j1) = %+v, %v, %v", c, ok, err)
	}
	if c, ok, _ := FindJobCommit(ctx, dir, "j3", worker); !ok || c.Op != "edit" {
		t.Errorf("FindJobCommit(j3) = %+v, %v", c, ok)
	}
	if _, ok, _ := FindJobCommit(ctx, dir, "j5", worker); ok {
		t.Error("a commit that only mentions j5 was taken for its commit")
	}
	if _, ok, _ := FindJobCommit(ctx, dir, "j", worker); ok {
		t.Error("a prefix of an id matched")
	}

	recent, err := RecentJobCommits(ctx, dir, "store", worker, 2)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recent {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, []string{"j10", "j2"}) {
		t.Errorf("recent stores: %q", ids)
	}
	if _, err := RecentJobCommits(ctx, dir, "st(re", worker, 1); err == nil {
		t.Error("an operation with regexp characters was accepted")
	}
}

func TestParseJobSubject(t *testing.T) {
	for _, tc := range []struct {
		in           string
		op, id, path string
		ok           bool
	}{
		{"store(0190-ab): notes/x y.md", "store", "0190-ab", "notes/x y.md", true},
		{"delete(id): a(b).md", "delete", "id", "a(b).md", true},
		{"store(): x.md", "", "", "", false},
		{"Store(id): x.md", "", "", "", false},
		{"store(id):x.md", "", "", "", false},
		{"init: bootstrap knowledge base", "", "", "", false},
	} {
		op, id, path, ok := ParseJobSubject(tc.in)
		if op != tc.op || id != tc.id || path != tc.path || ok != tc.ok {
			t.Errorf("ParseJobSubject(%q) = %q %q %q %v", tc.in, op, id, path, ok)
		}
		if ok && JobSubject(op, id, path) != tc.in {
			t.Errorf("JobSubject does not give back %q", tc.in)
		}
	}
}

func TestRestorePaths(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	// Nothing committed yet: every path is new and goes.
	write(t, dir, "n/new.md", "new")
	gitOut(t, dir, "add", "n/new.md")
	if err := RestorePaths(ctx, dir, []string{"n/new.md"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "n", "new.md")); !os.IsNotExist(err) {
		t.Errorf("new file still there: %v", err)
	}

	write(t, dir, "n/kept.md", "v1")
	write(t, dir, "n/gone.md", "v1")
	write(t, dir, "n/other.md", "v1")
	commit(t, dir, nil, "base")
	// A half-done job: kept.md changed and staged, gone.md deleted, a new
	// file added; another path changed by someone else.
	write(t, dir, "n/kept.md", "v2")
	gitOut(t, dir, "add", "n/kept.md")
	if err := os.Remove(filepath.Join(dir, "n", "gone.md")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "n/added.md", "x")
	gitOut(t, dir, "add", "n/added.md")
	write(t, dir, "n/other.md", "theirs")

	if err := RestorePaths(ctx, dir, []string{"n/kept.md", "n/gone.md", "n/added.md", "n/never.md"}); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"n/kept.md": "v1", "n/gone.md": "v1", "n/other.md": "theirs"} {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil || string(data) != want {
			t.Errorf("%s = %q, %v; want %q", rel, data, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "n", "added.md")); !os.IsNotExist(err) {
		t.Errorf("added file still there: %v", err)
	}
	if got := gitOut(t, dir, "status", "--porcelain"); got != "M n/other.md" {
		t.Errorf("status after restore: %q", got)
	}
}

// A commit that moved the branch but never reached git's index (a crash
// between update-ref and update-index) leaves its files staged as deleted
// and untracked; ResetIndexToHead puts the index in step with HEAD for
// that commit's paths alone.
func TestResetIndexToHead(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	write(t, dir, "n/old.md", "v1")
	write(t, dir, "n/other.md", "v1")
	commit(t, dir, nil, "base")
	write(t, dir, "n/old.md", "v2")
	write(t, dir, "n/new.md", "new")
	base := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD"))
	commit(t, dir, nil, "job")
	// Git's index as it was before the job's commit.
	gitOut(t, dir, "read-tree", base)
	write(t, dir, "n/other.md", "theirs")
	gitOut(t, dir, "add", "n/other.md")
	if got := gitOut(t, dir, "status", "--porcelain"); !strings.Contains(got, "D  n/new.md") {
		t.Fatalf("the index is not behind HEAD: %q", got)
	}
	if err := ResetIndexToHead(ctx, dir, "HEAD"); err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, dir, "status", "--porcelain"); got != "M  n/other.md" {
		t.Errorf("status after the reset: %q, want only the other path staged", got)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "n", "old.md")); err != nil || string(data) != "v2" {
		t.Errorf("the work tree changed: %q, %v", data, err)
	}
}

func TestPullRebaseAndPush(t *testing.T) {
	origin := gitRepo(t)
	ctx := context.Background()
	gitOut(t, origin, "checkout", "-q", "-b", "main")
	write(t, origin, "base.md", "base")
	commit(t, origin, nil, "base")
	gitOut(t, origin, "config", "receive.denyCurrentBranch", "updateInstead")

	clone := func() string {
		d := filepath.Join(t.TempDir(), "c")
		gitOut(t, filepath.Dir(d), "clone", "-q", origin, d)
		return d
	}
	a, b := clone(), clone()
	if !HasRemote(ctx, a, "origin") || HasRemote(ctx, a, "upstream") {
		t.Fatal("HasRemote")
	}
	// Two servers store a note each; the second rebases onto the first.
	write(t, a, "a.md", "a")
	if _, err := CommitPaths(ctx, a, worker, JobSubject("store", "ja", "a.md"), []string{"a.md"}); err != nil {
		t.Fatal(err)
	}
	if err := Push(ctx, a, "origin", "main"); err != nil {
		t.Fatal(err)
	}
	write(t, b, "b.md", "b")
	if _, err := CommitPaths(ctx, b, worker, JobSubject("store", "jb", "b.md"), []string{"b.md"}); err != nil {
		t.Fatal(err)
	}
	if err := Push(ctx, b, "origin", "main"); err == nil {
		t.Fatal("a push behind the remote was accepted")
	}
	if err := PullRebase(ctx, b, "origin", "main", ""); err != nil {
		t.Fatal(err)
	}
	if err := Push(ctx, b, "origin", "main"); err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, origin, "log", "--format=%s"); got != "store(jb): b.md\nstore(ja): a.md\nbase" {
		t.Errorf("origin history:\n%s", got)
	}
	if _, ok, _ := FindJobCommit(ctx, b, "jb", worker); !ok {
		t.Error("the rebased job commit is not found by its id")
	}

	// A conflicting rebase is aborted and leaves the branch as it was.
	write(t, a, "base.md", "from a")
	if _, err := CommitPaths(ctx, a, worker, JobSubject("edit", "jc", "base.md"), []string{"base.md"}); err != nil {
		t.Fatal(err)
	}
	if err := PullRebase(ctx, a, "origin", "main", ""); err != nil {
		t.Fatal(err)
	}
	if err := Push(ctx, a, "origin", "main"); err != nil {
		t.Fatal(err)
	}
	write(t, b, "base.md", "from b")
	if _, err := CommitPaths(ctx, b, worker, JobSubject("edit", "jd", "base.md"), []string{"base.md"}); err != nil {
		t.Fatal(err)
	}
	head := gitOut(t, b, "rev-parse", "HEAD")
	if err := PullRebase(ctx, b, "origin", "main", ""); err == nil {
		t.Fatal("a conflicting rebase gave no error")
	}
	if got := gitOut(t, b, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved after an aborted rebase: %s != %s", got, head)
	}
	if _, err := os.Stat(filepath.Join(b, ".git", "rebase-merge")); !os.IsNotExist(err) {
		t.Error("the rebase was left in progress")
	}

	// With the strategy option "theirs" the same rebase goes through, and
	// the local commit's lines win.
	if err := PullRebase(ctx, b, "origin", "main", "theirs"); err != nil {
		t.Fatalf("rebase with -X theirs: %v", err)
	}
	if got := gitOut(t, b, "show", "HEAD:base.md"); got != "from b" {
		t.Errorf("HEAD:base.md after the rebase = %q, want the local commit's", got)
	}
	if gitOut(t, b, "rev-parse", "HEAD~1") != gitOut(t, b, "rev-parse", "origin/main") {
		t.Error("the local commit was not replayed onto origin/main")
	}

	// A remote without the branch: nothing to rebase onto.
	gitOut(t, b, "checkout", "-q", "-b", "solo")
	if err := PullRebase(ctx, b, "origin", "solo", ""); err != nil {
		t.Errorf("rebase onto a missing remote branch: %v", err)
	}
}
