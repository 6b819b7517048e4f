package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/store"
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
	// A server whose first job meets the typo: the git processes kk
	// keeps between jobs start then, and die on it at once, saying
	// nothing kk reads (EOF).
	s.stop()
	s = start(t, k, nil)
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

// A start while git cannot read its configuration is refused naming the
// file and git's words, with nothing written: kk serve said the root was
// "not in a git repository" (a code repository it serves, a knowledge
// repository), and found an empty folder inside a repository no
// repository at all, which it then tried to git init. Found by the
// serve10 red team.
func TestStartWhileGitCannotReadItsConfiguration(t *testing.T) {
	needGit(t)
	bg := context.Background()
	root := filepath.Join(t.TempDir(), "repo")
	if _, err := gitx.Run(bg, t.TempDir(), "init", "-q", "-b", "main", root); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(root, "notes")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte("[core\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	for _, dir := range []string{root, empty} {
		_, err := Bootstrap(bg, dir, store.InitOptions{Version: "test", Now: time.Now(), Command: "test"})
		if err == nil || !strings.Contains(err.Error(), "bad config line 1") || !strings.Contains(err.Error(), global) || strings.Contains(err.Error(), "not in a git repository") {
			t.Errorf("kk serve over %s, git's configuration unreadable: %v; want a refusal naming the file", dir, err)
		}
	}
	if entries, _ := os.ReadDir(empty); len(entries) > 0 {
		t.Errorf("the empty folder inside the repository now holds %d entries; want nothing written", len(entries))
	}
	if _, err := os.Stat(filepath.Join(root, store.DirName)); err == nil {
		t.Error("a knowledge base was written into the repository")
	}
}

// A repository whose refs git cannot read (.git/packed-refs damaged: a
// line cut by a crash or a full disk while git packed the refs, a bad
// merge of a synced folder) makes git refuse every command that reads a
// ref, so each job failed in turn ("committing: EOF", the git update-ref
// kk keeps between jobs having died on it), losing every post accepted
// meanwhile, while /healthz said ok. Found by the serve10 red team. The
// job is held, /healthz gives git's words naming the file; once the file
// is repaired, the job is done with its one commit.
func TestFaultDamagedPackedRefsHoldsTheJob(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	if j := s.post(t, httpapi.PostRequest{Title: "Before the damage", Content: "Before.\n"}); j.Status != "done" {
		t.Fatalf("post before: %+v", j)
	}
	git(t, k, "pack-refs", "--all")
	packed := filepath.Join(k.Root, ".git", "packed-refs")
	good, err := os.ReadFile(packed)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(packed, append(append([]byte{}, good...), "a line cut sho\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	id := s.postAsync(t, "During the damage")
	h := s.waitHealth(t, "packed-refs")
	if !strings.Contains(h.WaitingFor, "unexpected line") {
		t.Errorf("/healthz does not give git's words: %+v", h)
	}
	if j, _ := s.Client.Job(ctx, id); j.Status == "failed" || j.Status == "done" {
		t.Fatalf("the job ended while git could not read the refs: %+v", j)
	}
	if err := os.WriteFile(packed, good, 0o644); err != nil {
		t.Fatal(err)
	}
	j := s.waitJob(t, id, 30*time.Second)
	if j.Status != "done" {
		t.Fatalf("the job once the file was repaired: %+v", j)
	}
	jobCommit(t, k, "store", j)
	if h := s.health(t); h.Status != "ok" {
		t.Errorf("health after: %+v", h)
	}
	clean(t, k)
}
