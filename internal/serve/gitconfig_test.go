package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
)

// A git configuration git cannot read (a person's ~/.gitconfig saved with
// a typo while kk serve runs: "fatal: bad config line 1 in file …") makes
// every git command fail, so each job failed in turn ("committing: git
// check-attr: EOF", the git kk keeps between jobs having died on it),
// losing every post accepted meanwhile, while /healthz said ok. Found by
// the serve10 red team. The job is held, /healthz names the file and
// git's words; once the file is fixed, the job, and an edit queued behind
// it, are done with their one commit each.
func TestFaultUnreadableGitConfigHoldsTheJob(t *testing.T) {
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte("[core]\n\tquotepath = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	k := newRepo(t, 0)
	s := start(t, k, nil)
	first := s.post(t, httpapi.PostRequest{Title: "Before the typo", Content: "Before.\n"})
	if first.Status != "done" {
		t.Fatalf("post before: %+v", first)
	}
	if err := os.WriteFile(global, []byte("[core\n\tquotepath = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := s.postAsync(t, "During the typo")
	edit, err := s.Client.Edit(ctx, httpapi.EditRequest{Path: first.Path, Content: "Edited during the typo.\n"})
	if err != nil {
		t.Fatal(err)
	}
	h := s.waitHealth(t, "bad config")
	if !strings.Contains(h.WaitingFor, global) {
		t.Errorf("/healthz does not name the file: %+v", h)
	}
	for _, jid := range []string{id, edit.JobID} {
		if j, _ := s.Client.Job(ctx, jid); j.Status == "failed" || j.Status == "done" {
			t.Fatalf("a job ended while git could not read its configuration: %+v", j)
		}
	}
	if err := os.WriteFile(global, []byte("[core]\n\tquotepath = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j := s.waitJob(t, id, 30*time.Second)
	if j.Status != "done" {
		t.Fatalf("the job once the file was fixed: %+v", j)
	}
	jobCommit(t, k, "store", j)
	if e := s.waitJob(t, edit.JobID, 30*time.Second); e.Status != "done" {
		t.Fatalf("the edit once the file was fixed: %+v", e)
	} else {
		jobCommit(t, k, "edit", e)
	}
	if h := s.health(t); h.Status != "ok" {
		t.Errorf("health after: %+v", h)
	}
	clean(t, k)
}
