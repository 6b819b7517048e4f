package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/llm"
	"github.com/kk-project/kk/internal/service"
	"github.com/kk-project/kk/internal/store"
)

var ctx = context.Background()

func git(t *testing.T, k *store.KB, args ...string) string {
	t.Helper()
	out, err := gitx.Run(ctx, k.Root, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// withOrigin gives k's repository a bare remote, origin, holding its main
// branch, and returns a clone of it (name under a temporary folder): a
// colleague's.
func withOrigin(t *testing.T, k *store.KB, name string) string {
	t.Helper()
	origin := filepath.Join(t.TempDir(), "origin.git")
	git(t, k, "init", "-q", "--bare", "-b", "main", origin)
	git(t, k, "remote", "add", "origin", origin)
	git(t, k, "push", "-q", "origin", "main")
	clone := filepath.Join(t.TempDir(), name)
	git(t, k, "clone", "-q", origin, clone)
	return clone
}

// post posts a note and waits for its job.
func (s *server) post(t *testing.T, r httpapi.PostRequest) httpapi.JobStatus {
	t.Helper()
	j, err := s.Client.Post(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	return s.wait(t, j.JobID)
}

func (s *server) edit(t *testing.T, r httpapi.EditRequest) httpapi.JobStatus {
	t.Helper()
	j, err := s.Client.Edit(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	return s.wait(t, j.JobID)
}

// jobCommit checks that job j has exactly one commit and returns the
// files it touched.
func jobCommit(t *testing.T, k *store.KB, op string, j httpapi.JobStatus) []string {
	t.Helper()
	subjects := git(t, k, "log", "--format=%s")
	want := gitx.JobSubject(op, j.JobID, j.Path)
	if n := strings.Count(subjects+"\n", want+"\n"); n != 1 {
		t.Fatalf("%d commits %q; history:\n%s", n, want, subjects)
	}
	files := strings.Fields(git(t, k, "log", "-1", "--format=", "--name-only", "--grep", "("+j.JobID+")", "--fixed-strings"))
	if author := git(t, k, "log", "-1", "--format=%an <%ae>", "--grep", "("+j.JobID+")", "--fixed-strings"); author != "kk serve <kk-serve@kk.invalid>" {
		t.Errorf("author %q", author)
	}
	return files
}

// clean checks that the work tree holds no change git does not know of.
func clean(t *testing.T, k *store.KB) {
	t.Helper()
	if st := git(t, k, "status", "--porcelain"); st != "" {
		t.Errorf("work tree not clean:\n%s", st)
	}
}

func TestStoreEditDeleteOnTheTree(t *testing.T) {
	k := newRepo(t, 0)
	// Ordinary markdown elsewhere in the repository breaks nothing.
	for name, text := range map[string]string{"README.md": "# A project\n", "docs/guide.md": "no front matter\n"} {
		if err := os.MkdirAll(filepath.Join(k.Root, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(k.Root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, k, "add", "README.md", "docs")
	git(t, k, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "readme")
	s := start(t, k, nil)

	// A post lands in inbox/ of an empty tree, as a practice (imperative
	// title), in one commit of the leaf and the index files.
	j := s.post(t, httpapi.PostRequest{Title: "Use channels to pass values", Content: "---\ntitle: dropped\n---\n\nChannels pass values between goroutines.\n", Tags: []string{"golang", "Concurrency", "golang"}})
	if j.Status != "done" || j.Path != "inbox/practice-use-channels-to-pass-values.md" {
		t.Fatalf("post: %+v", j)
	}
	files := jobCommit(t, k, "store", j)
	leaf := store.DirName + "/nodes/" + j.Path
	if !slices.Contains(files, leaf) || !slices.Contains(files, store.DirName+"/ENTRY.md") {
		t.Errorf("commit files %v", files)
	}
	for _, f := range files {
		if !strings.HasPrefix(f, store.DirName+"/") {
			t.Errorf("the job's commit touched %s", f)
		}
	}
	clean(t, k)
	n, err := k.ReadLeaf(j.Path)
	if err != nil {
		t.Fatal(err)
	}
	if n.Type != "practice" || n.Title != "Use channels to pass values" || !slices.Equal(n.Tags, []string{"golang", "Concurrency"}) ||
		string(n.Body) != "Channels pass values between goroutines.\n" || n.Description != "Channels pass values between goroutines." {
		t.Errorf("leaf %+v body %q", n, n.Body)
	}
	if v, _ := n.Extra(keyCreatedBy); v != j.JobID {
		t.Errorf("%s = %v", keyCreatedBy, v)
	}

	// GET /content by the tree's path and by the repository's.
	for _, p := range []string{j.Path, leaf} {
		d, err := s.Client.Get(ctx, p)
		if err != nil || d.Path != p || !strings.Contains(d.Content, "kk_id: practice-use-channels-to-pass-values") {
			t.Errorf("get %s: %+v %v", p, d, err)
		}
	}
	var api *httpapi.APIError
	if _, err := s.Client.Get(ctx, "inbox/nope.md"); !errors.As(err, &api) || api.Status != http.StatusNotFound {
		t.Errorf("get of a missing note: %v", err)
	}

	// A content edit, then a metadata-only edit.
	e := s.edit(t, httpapi.EditRequest{Path: j.Path, Content: "Channels are typed conduits.\n"})
	if e.Status != "done" || e.Path != j.Path {
		t.Fatalf("edit: %+v", e)
	}
	jobCommit(t, k, "edit", e)
	e = s.edit(t, httpapi.EditRequest{Path: j.Path, Title: "Use typed channels", Description: "Typed conduits", Tags: []string{"go"}})
	if e.Status != "done" {
		t.Fatalf("metadata edit: %+v", e)
	}
	jobCommit(t, k, "edit", e)
	n, _ = k.ReadLeaf(j.Path)
	if n.Title != "Use typed channels" || n.Description != "Typed conduits" || !slices.Equal(n.Tags, []string{"go"}) || string(n.Body) != "Channels are typed conduits.\n" || n.ID != "practice-use-channels-to-pass-values" {
		t.Errorf("after the edits: %+v body %q", n, n.Body)
	}
	if v, _ := n.Extra("kk_version"); v != int64(3) {
		t.Errorf("kk_version = %v, want 3", v)
	}
	clean(t, k)

	// A failed job leaves nothing behind and makes no commit.
	head := git(t, k, "rev-parse", "HEAD")
	d, err := s.Client.Delete(ctx, "nope/x.md")
	if err != nil {
		t.Fatal(err)
	}
	if f := s.wait(t, d.JobID); f.Status != "failed" || f.Error != "file not found: nope/x.md" {
		t.Errorf("delete of a missing note: %+v", f)
	}
	if git(t, k, "rev-parse", "HEAD") != head {
		t.Error("a failed job made a commit")
	}
	clean(t, k)

	// A deletion.
	d, err = s.Client.Delete(ctx, j.Path)
	if err != nil {
		t.Fatal(err)
	}
	del := s.wait(t, d.JobID)
	if del.Status != "done" {
		t.Fatalf("delete: %+v", del)
	}
	jobCommit(t, k, "delete", del)
	if _, err := os.Stat(k.NodePath(j.Path)); !errors.Is(err, os.ErrNotExist) {
		t.Error("the deleted leaf is still there")
	}
	clean(t, k)
	if out, err := gitx.Run(ctx, k.Root, "ls-files", store.DirName+"/nodes/inbox"); err != nil || strings.Contains(string(out), j.Path) {
		t.Errorf("the deleted leaf is still tracked: %s %v", out, err)
	}
}

func TestPlacementNearestFolderElseInbox(t *testing.T) {
	k := newRepo(t, 0)
	for i, title := range []string{"Goroutine scheduling", "Goroutine leaks"} {
		if _, err := curate.WriteNode(ctx, k, contracts.NodeInput{Type: "map", Title: title, Folder: "golang/runtime",
			Body: fmt.Sprintf("Goroutines are multiplexed onto threads by the scheduler (%d).\n", i)}, curate.WriteOptions{Command: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := curate.WriteNode(ctx, k, contracts.NodeInput{Type: "map", Title: "Invoice layout", Folder: "billing", Body: "Invoices carry a VAT line.\n"}, curate.WriteOptions{Command: "test"}); err != nil {
		t.Fatal(err)
	}
	git(t, k, "add", "-A")
	git(t, k, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tree")
	s := start(t, k, nil)
	for _, c := range []struct {
		req  httpapi.PostRequest
		path string
	}{
		{httpapi.PostRequest{Content: "# How the scheduler parks goroutines\nA goroutine blocked on a channel is parked by the scheduler.\n"}, "golang/runtime/map-how-the-scheduler-parks-goroutines.md"},
		{httpapi.PostRequest{Content: "Never skip the code review.\n"}, "inbox/practice-never-skip-the-code-review.md"},
		{httpapi.PostRequest{Content: "Invoices and the VAT line.\n", Type: "adr", Title: "VAT on invoices"}, "billing/adr-vat-on-invoices.md"},
	} {
		if j := s.post(t, c.req); j.Status != "done" || j.Path != c.path {
			t.Errorf("post %q: %+v, want %s", c.req.Content, j, c.path)
		}
	}
	clean(t, k)
}

func TestATitleWithoutASCIINamesTheNoteAfterItsJob(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	j := s.post(t, httpapi.PostRequest{Title: "日本語", Content: "本文。\n"})
	if j.Status != "done" || j.Path != "inbox/map-note-"+shortJobID(j.JobID)+".md" {
		t.Fatalf("post: %+v", j)
	}
	if n, err := k.ReadLeaf(j.Path); err != nil || n.Title != "日本語" {
		t.Errorf("leaf %+v %v", n, err)
	}
}

func TestSameTitleNeverOverwrites(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	var paths []string
	for i := range 6 {
		j := s.post(t, httpapi.PostRequest{Title: "Release checklist", Content: fmt.Sprintf("Step %d.\n", i)})
		if j.Status != "done" {
			t.Fatalf("post %d: %+v", i, j)
		}
		paths = append(paths, j.Path)
	}
	slices.Sort(paths)
	if len(slices.Compact(slices.Clone(paths))) != 6 {
		t.Fatalf("paths %v", paths)
	}
	for _, want := range []string{"inbox/map-release-checklist.md", "inbox/map-release-checklist-2.md", "inbox/map-release-checklist-3.md", "inbox/map-release-checklist-4.md"} {
		if !slices.Contains(paths, want) {
			t.Errorf("no %s among %v", want, paths)
		}
	}
}

func TestSearchTagsRecentOnTheIndex(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	a := s.post(t, httpapi.PostRequest{Title: "Go channels", Content: "Channels pass values between goroutines.\n", Tags: []string{"golang", "concurrency"}})
	b := s.post(t, httpapi.PostRequest{Title: "Deploy checklist", Content: "Tag a release, then CI deploys it.\n", Tags: []string{"Release"}})
	docs, err := s.Client.Search(ctx, "goroutines channels", 5)
	if err != nil || len(docs) != 1 || docs[0].Path != a.Path || !strings.Contains(docs[0].Content, "Channels pass values") {
		t.Errorf("search: %+v %v", docs, err)
	}
	if docs, err := s.Client.Search(ctx, "zebra", 5); err != nil || len(docs) != 0 {
		t.Errorf("search with no hit: %+v %v", docs, err)
	}
	tagged, err := s.Client.ByTags(ctx, []string{"release"}, false)
	if err != nil || len(tagged) != 1 || tagged[0].Path != b.Path || !slices.Equal(tagged[0].Tags, []string{"release"}) || tagged[0].Title != "Deploy checklist" {
		t.Errorf("by tag: %+v %v", tagged, err)
	}
	if both, err := s.Client.ByTags(ctx, []string{"golang", "release"}, true); err != nil || len(both) != 0 {
		t.Errorf("all of two tags: %+v %v", both, err)
	}
	tags, err := s.Client.Tags(ctx)
	want := []service.TagCount{{Tag: "concurrency", Count: 1}, {Tag: "golang", Count: 1}, {Tag: "release", Count: 1}}
	if err != nil || !slices.Equal(tags, want) {
		t.Errorf("tags: %+v %v", tags, err)
	}
	posts, err := s.Client.Recent(ctx, 10)
	if err != nil || len(posts) != 2 || posts[0].JobID != b.JobID || posts[1].Path != a.Path || !slices.Equal(posts[1].Tags, []string{"golang", "concurrency"}) {
		t.Errorf("recent: %+v %v", posts, err)
	}
	// Without a model, /answer and /ask are 503.
	var api *httpapi.APIError
	if _, err := s.Client.Answer(ctx, "channels"); !errors.As(err, &api) || api.Status != http.StatusServiceUnavailable {
		t.Errorf("answer offline: %v", err)
	}
	if _, err := s.Client.Ask(ctx, "what are channels?"); !errors.As(err, &api) || api.Status != http.StatusServiceUnavailable {
		t.Errorf("ask offline: %v", err)
	}
}

// fakeModel is a stand-in for Ollama that answers each decision by the
// first of its schema's properties found in replies, in the order given
// (placement has folder, rerank paths, answer sources, ask none of them).
func fakeModel(t *testing.T, replies [][2]string) llm.Provider {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Format struct {
				Properties map[string]any `json:"properties"`
			} `json:"format"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("fake model: %v", err)
		}
		for _, rep := range replies {
			if _, ok := req.Format.Properties[rep[0]]; ok || rep[0] == "" {
				_ = json.NewEncoder(w).Encode(map[string]any{"message": map[string]string{"role": "assistant", "content": rep[1]}, "done": true})
				return
			}
		}
		http.Error(w, `{"error":"no reply"}`, http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	p, err := llm.New(llm.Config{Provider: "ollama", Model: "fake", URL: srv.URL}, llm.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWithAModel(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, fakeModel(t, [][2]string{
		{"folder", `{"folder":"go/concurrency","title":"Channels","description":"What channels are for","type":"map","tags":["golang"]}`},
		{"paths", `{"paths":["go/concurrency/map-select.md","nowhere.md","go/concurrency/map-channels.md"]}`},
		{"sources", `{"answer":"Use a channel.","sources":["go/concurrency/map-channels.md"]}`},
		{"", `{"title":"Channels.","answer":"They pass values.","tags":["golang"]}`},
	}))
	a := s.post(t, httpapi.PostRequest{Content: "Channels pass values between goroutines.\n"})
	if a.Status != "done" || a.Path != "go/concurrency/map-channels.md" {
		t.Fatalf("post with a model: %+v", a)
	}
	n, _ := k.ReadLeaf(a.Path)
	if n.Title != "Channels" || n.Description != "What channels are for" || !slices.Equal(n.Tags, []string{"golang"}) {
		t.Errorf("leaf %+v", n)
	}
	// The user's title and tags win over the model's.
	b := s.post(t, httpapi.PostRequest{Title: "Select", Tags: []string{"select"}, Content: "Select waits on several channels.\n"})
	if b.Path != "go/concurrency/map-select.md" {
		t.Fatalf("post with a title: %+v", b)
	}
	if n, _ := k.ReadLeaf(b.Path); n.Title != "Select" || !slices.Equal(n.Tags, []string{"select"}) {
		t.Errorf("leaf %+v", n)
	}
	// The model reranks kk's hits; paths it invents are dropped.
	docs, err := s.Client.Search(ctx, "channels", 5)
	if err != nil || len(docs) != 2 || docs[0].Path != b.Path || docs[1].Path != a.Path {
		t.Errorf("reranked search: %+v %v", docs, err)
	}
	ans, err := s.Client.Answer(ctx, "channels")
	if err != nil || ans.Answer != "Use a channel." || len(ans.Sources) != 2 {
		t.Errorf("answer: %+v %v", ans, err)
	}
	d, err := s.Client.Ask(ctx, "What are channels?")
	if err != nil || d.Title != "Channels" || d.Answer != "They pass values." {
		t.Errorf("ask: %+v %v", d, err)
	}
}

// rejectCommits installs a reference-transaction hook that refuses every
// move of a ref (a repository's policy), so that kk's commits fail after
// their transactions; the returned function removes it.
func rejectCommits(t *testing.T, k *store.KB) func() {
	t.Helper()
	hook := filepath.Join(k.Root, ".git", "hooks", "reference-transaction")
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n[ \"$1\" = prepared ] && { echo refused by policy >&2; exit 1; }\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return func() { _ = os.Remove(hook) }
}

func TestAFailedCommitLeavesNothing(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	ok := s.post(t, httpapi.PostRequest{Title: "First", Content: "One.\n"})
	// The repository refuses the move of the branch: the job fails after
	// its transaction, and its files are put back. (A lock another git
	// process holds is waited for instead: TestFault….)
	allow := rejectCommits(t, k)
	j := s.post(t, httpapi.PostRequest{Title: "Second", Content: "Two.\n"})
	allow()
	if j.Status != "failed" || !strings.Contains(j.Error, "committing") {
		t.Fatalf("job: %+v", j)
	}
	if _, err := os.Stat(k.NodePath("inbox/map-second.md")); !errors.Is(err, os.ErrNotExist) {
		t.Error("the failed job's leaf is still there")
	}
	clean(t, k)
	// An edit and a deletion whose commits fail leave the note as it was.
	before, err := os.ReadFile(k.NodePath(ok.Path))
	if err != nil {
		t.Fatal(err)
	}
	allow = rejectCommits(t, k)
	e := s.edit(t, httpapi.EditRequest{Path: ok.Path, Content: "Changed.\n", Title: "Changed"})
	d, err := s.Client.Delete(ctx, ok.Path)
	if err != nil {
		t.Fatal(err)
	}
	del := s.wait(t, d.JobID)
	allow()
	if e.Status != "failed" || del.Status != "failed" {
		t.Fatalf("edit %+v, delete %+v", e, del)
	}
	if after, err := os.ReadFile(k.NodePath(ok.Path)); err != nil || string(after) != string(before) {
		t.Errorf("after the failed edit and deletion: %q %v", after, err)
	}
	clean(t, k)
	// The next job commits only its own files.
	next := s.post(t, httpapi.PostRequest{Title: "Third", Content: "Three.\n"})
	if next.Status != "done" {
		t.Fatalf("next job: %+v", next)
	}
	for _, f := range jobCommit(t, k, "store", next) {
		if strings.Contains(f, "second") || strings.Contains(f, ok.Path) {
			t.Errorf("the next commit carries %s", f)
		}
	}
	clean(t, k)
}

func TestRecoveryOfAnInterruptedJob(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	first := s.post(t, httpapi.PostRequest{Title: "Kept", Content: "Kept.\n"})
	s.stop()
	// A job that wrote its leaf and index files but did not commit, as a
	// crash between the two leaves it.
	b := New(Options{KB: k})
	var touched []string
	job := &service.Job{ID: "01a2-test", Op: service.OpStore, Request: service.JobRequest{Title: "Interrupted", Content: "Half done.\n"}, Created: time.Now()}
	// Write through the real path, failing at the commit's place.
	allow := rejectCommits(t, k)
	_, err := b.Apply(ctx, withTouch(job, &touched))
	allow()
	if err == nil {
		t.Fatal("the commit did not fail")
	}
	if _, err := os.Stat(k.NodePath("inbox/map-interrupted.md")); err != nil {
		t.Fatalf("the interrupted job's leaf is not on disk: %v", err)
	}
	if !slices.Contains(touched, store.DirName+"/nodes/inbox/map-interrupted.md") || !slices.Contains(touched, store.DirName+"/ENTRY.md") {
		t.Errorf("touched %v", touched)
	}
	if c, found, err := b.Committed(ctx, job.ID); err != nil || found {
		t.Fatalf("Committed of an uncommitted job: %v %v %v", c, found, err)
	}
	if c, found, err := b.Committed(ctx, first.JobID); err != nil || !found || c != first.Path {
		t.Errorf("Committed of a committed job: %q %v %v", c, found, err)
	}
	if err := b.Restore(ctx, jobFrom(job, touched)); err != nil {
		t.Fatal(err)
	}
	clean(t, k)
	if _, err := os.Stat(k.NodePath("inbox/map-interrupted.md")); !errors.Is(err, os.ErrNotExist) {
		t.Error("restore left the leaf")
	}
	// Run again, it lands once, at the same path.
	again, err := b.Apply(ctx, withTouch(job, &touched))
	if err != nil || again != "inbox/map-interrupted.md" {
		t.Fatalf("re-run: %q %v", again, err)
	}
	jobCommit(t, k, "store", httpapi.JobStatus{JobID: job.ID, Path: again})
	clean(t, k)
	if got := len(strings.Split(git(t, k, "ls-files", store.DirName+"/nodes/inbox"), "\n")); got != 3 {
		t.Errorf("inbox holds %d files, want 2 leaves and index.md", got)
	}
}

// withTouch makes job record the paths it announces in touched.
func withTouch(job *service.Job, touched *[]string) *service.Job {
	job.OnTouch(func(paths ...string) error {
		for _, p := range paths {
			if !slices.Contains(*touched, p) {
				*touched = append(*touched, p)
			}
		}
		return nil
	})
	return job
}

// jobFrom is the queue's record of job with the paths it touched.
func jobFrom(job *service.Job, touched []string) jobqueue.Job {
	return jobqueue.Job{ID: job.ID, Op: job.Op, Status: jobqueue.Processing, Touched: touched}
}

func TestReadStaysInTheTree(t *testing.T) {
	k := newRepo(t, 0)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, k.NodePath("out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.md"), k.NodePath("evil.md")); err != nil {
		t.Fatal(err)
	}
	b := New(Options{KB: k})
	for _, p := range []string{"out/secret.md", "evil.md", "nope.md"} {
		if _, err := b.Read(ctx, p); !errors.Is(err, service.ErrNotFound) {
			t.Errorf("Read(%s) = %v, want not found", p, err)
		}
	}
	if got, err := b.Read(ctx, "index.md"); err != nil || !strings.Contains(got, "# kenkeep Index") {
		t.Errorf("Read(index.md) = %q, %v", got, err)
	}
}
