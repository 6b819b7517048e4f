package serve

// Ports of knowledged's queue tests (wiztools/knowledged
// internal/queue/queue_test.go at da946d4) to kk serve's real backend,
// through its HTTP face.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
)

// jobJSON is GET /jobs/{id}'s answer, whole.
func (s *server) jobJSON(t *testing.T, id string) (int, string) {
	t.Helper()
	return s.call(t, "GET", "/jobs/"+id, "")
}

// queue_test.go TestEnqueue_DeduplicatesActiveJobs,
// TestEnqueue_DistinguishesActiveJobsByMetadata,
// TestEnqueue_AllowsRepostAfterCompletion, TestEnqueueDelete_JobFields,
// TestEnqueueDelete_Retrievable, TestEnqueueEdit_JobFields: while jobs
// wait (another branch is checked out, so the worker holds), an identical
// post gets the first post's job and a post with another title its own;
// a queued edit or deletion is answered with its path; once the first
// post is done, the same post is a new job.
func TestKnowledgedDedupWhileQueued(t *testing.T) {
	k := newRepo(t, 0)
	handNote(t, k, "tech/go/map-goroutines.md", "Go Goroutines", "concurrency primitives", nil, "", "old content\n")
	handNote(t, k, "notes/map-meeting.md", "Meeting", "notes of a meeting", nil, "", "Agenda.\n")
	commitAll(t, k, "seed")
	s := start(t, k, nil)
	git(t, k, "switch", "-q", "-c", "elsewhere")

	const same = `{"content":"some knowledge content","hint":"hint","title":"","tags":["tag"]}`
	first := s.accepted(t, "POST", same)
	code, got := s.call(t, "POST", "/content", same)
	if code != 202 || got != fmt.Sprintf(`{"job_id":%q,"status":"queued"}`+"\n", first) {
		t.Errorf("an identical post while the first is queued: %d %s", code, got)
	}
	titled := s.accepted(t, "POST", `{"content":"some knowledge content","hint":"hint","title":"First Title","tags":["tag"]}`)
	other := s.accepted(t, "POST", `{"content":"some knowledge content","hint":"hint","title":"Second Title","tags":["tag"]}`)
	if titled == first || other == titled {
		t.Errorf("posts with other titles were merged: %s %s %s", first, titled, other)
	}
	// The key is the trimmed title and the cleaned tags, as knowledged's.
	spaced := s.accepted(t, "POST", `{"content":"other content","hint":"","title":"  Spaced  ","tags":[" go ",""]}`)
	if code, got := s.call(t, "POST", "/content", `{"content":"other content","hint":"","title":"Spaced","tags":["go"]}`); code != 202 || !strings.Contains(got, spaced) {
		t.Errorf("the same post with its title and tags trimmed: %d %s, want job %s", code, got, spaced)
	}
	del := s.accepted(t, "DELETE", `{"path":"notes/map-meeting.md"}`)
	edit := s.accepted(t, "PUT", `{"path":"tech/go/map-goroutines.md","content":"updated","title":"Goroutines","description":"runtime notes"}`)
	// knowledged's fields, and kk's waiting_for: why the jobs wait
	// (TestFaultHeldJobSaysWhatItWaitsFor).
	h := s.waitHealth(t, "elsewhere")
	for id, want := range map[string]string{
		first: fmt.Sprintf(`{"job_id":%q,"status":"queued","waiting_for":%q}`, first, h.WaitingFor),
		del:   fmt.Sprintf(`{"job_id":%q,"status":"queued","path":"notes/map-meeting.md","waiting_for":%q}`, del, h.WaitingFor),
		edit:  fmt.Sprintf(`{"job_id":%q,"status":"queued","path":"tech/go/map-goroutines.md","waiting_for":%q}`, edit, h.WaitingFor),
	} {
		if code, got := s.jobJSON(t, id); code != 200 || got != want+"\n" {
			t.Errorf("GET /jobs/%s while queued: %d %s, want %s", id, code, got, want)
		}
	}
	if st := s.Queue.Stats(); st.Depth != 6 {
		t.Errorf("queue depth %d, want 6 (one job for each pair of identical posts)", st.Depth)
	}

	git(t, k, "switch", "-q", "main")
	for _, id := range []string{first, titled, other, spaced, del, edit} {
		if j := s.waitJob(t, id, 30*time.Second); j.Status != "done" {
			t.Errorf("job %s: %+v", id, j)
		}
	}
	again := s.accepted(t, "POST", same)
	if again == first {
		t.Error("a post identical to a finished job was merged into it")
	}
	if j := s.wait(t, again); j.Status != "done" || j.Path == s.wait(t, first).Path {
		t.Errorf("the post made again: %+v", j)
	}
	clean(t, k)
}

// queue_test.go TestExecuteEdit_UpdatesFileIndexAndCommit: an edit with
// content, title and description rewrites the note, INDEX.md lists it
// with its new title and description, and one commit names the job.
func TestKnowledgedEditUpdatesNoteIndexAndCommit(t *testing.T) {
	k := newRepo(t, 0)
	handNote(t, k, "tech/go/map-goroutines.md", "Go Goroutines", "concurrency primitives", nil,
		"kk_created_at: 2026-05-01T10:00:00Z\nkk_updated_at: 2026-05-01T10:00:00Z\n", "old content\n")
	commitAll(t, k, "seed")
	s := start(t, k, nil)
	id := s.accepted(t, "PUT", `{"path":"tech/go/map-goroutines.md","content":"new content","title":"Go Scheduler","description":"updated runtime notes","tags":null}`)
	j := s.wait(t, id)
	if j.Status != "done" || j.Path != "tech/go/map-goroutines.md" {
		t.Fatalf("edit: %+v", j)
	}
	n, err := k.ReadLeaf(j.Path)
	if err != nil {
		t.Fatal(err)
	}
	if n.Title != "Go Scheduler" || n.Description != "updated runtime notes" {
		t.Errorf("leaf: %+v", n)
	}
	if got := body(t, s, j.Path); got != "new content" {
		t.Errorf("body %q", got)
	}
	if v, _ := n.Extra(keyCreatedAt); v != "2026-05-01T10:00:00Z" {
		t.Errorf("%s = %v: an edit keeps the creation time", keyCreatedAt, v)
	}
	if v, _ := n.Extra(keyUpdatedAt); v == "2026-05-01T10:00:00Z" {
		t.Errorf("%s = %v: an edit sets the modification time", keyUpdatedAt, v)
	}
	doc, err := s.Client.Get(ctx, "INDEX.md")
	if err != nil || !strings.Contains(doc.Content, "\n## Go\n- [Go Scheduler](tech/go/map-goroutines.md) — updated runtime notes\n") {
		t.Errorf("INDEX.md: %v\n%s", err, doc.Content)
	}
	jobCommit(t, k, "edit", j)
	if got := git(t, k, "log", "-1", "--format=%s"); got != "edit("+id+"): tech/go/map-goroutines.md" {
		t.Errorf("commit %q", got)
	}
	clean(t, k)
}

// queue_test.go TestExecuteEdit_MetadataOnlyPreservesBodyAndUpdatesTags:
// an edit without content changes the title and tags, keeps the
// description not given, and keeps the body byte for byte.
func TestKnowledgedMetadataOnlyEditKeepsTheBody(t *testing.T) {
	k := newRepo(t, 0)
	handNote(t, k, "notes/map-hello.md", "Old Title", "Old description", []string{"old"}, "", "# Old Title\n\nBody.\n")
	commitAll(t, k, "seed")
	s := start(t, k, nil)
	before, err := s.Client.Get(ctx, "notes/map-hello.md")
	if err != nil {
		t.Fatal(err)
	}
	j := s.wait(t, s.accepted(t, "PUT", `{"path":"notes/map-hello.md","content":"","title":"New Title","description":"","tags":["new","tag"]}`))
	if j.Status != "done" {
		t.Fatalf("edit: %+v", j)
	}
	n, err := k.ReadLeaf("notes/map-hello.md")
	if err != nil {
		t.Fatal(err)
	}
	if n.Title != "New Title" || n.Description != "Old description" || strings.Join(n.Tags, ",") != "new,tag" || string(n.Body) != "# Old Title\n\nBody.\n" {
		t.Errorf("leaf %+v body %q", n, n.Body)
	}
	after, err := s.Client.Get(ctx, "notes/map-hello.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(before.Content, "\n---\n# Old Title\n\nBody.\n") || !strings.HasSuffix(after.Content, "\n---\n# Old Title\n\nBody.\n") {
		t.Errorf("the body changed:\n%s\n---- after ----\n%s", before.Content, after.Content)
	}
}

// queue_test.go TestExecuteEdit_MissingFileFails: an edit of a note that
// is not there fails with "file not found", keeps its path, and commits
// nothing.
func TestKnowledgedEditOfAMissingNoteFails(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	head := git(t, k, "rev-parse", "HEAD")
	id := s.accepted(t, "PUT", `{"path":"missing/file.md","content":"new content"}`)
	s.wait(t, id)
	code, got := s.jobJSON(t, id)
	want := fmt.Sprintf(`{"job_id":%q,"status":"failed","path":"missing/file.md","error":"file not found: missing/file.md"}`, id)
	if code != 200 || got != want+"\n" {
		t.Errorf("GET /jobs/%s: %d %s, want %s", id, code, got, want)
	}
	var j httpapi.JobStatus
	if err := json.Unmarshal([]byte(got), &j); err != nil {
		t.Fatal(err)
	}
	if git(t, k, "rev-parse", "HEAD") != head {
		t.Error("a failed edit made a commit")
	}
	clean(t, k)
}
