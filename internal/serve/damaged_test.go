package serve

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
)

// A git index damaged under a running server (a crash or a full disk
// while another git command wrote it, a disk's fault) is the
// repository's, not a job's: every job's commit reads it, so each would
// fail in turn while /healthz said ok. The job is held, /healthz says
// the index is damaged and how to rebuild it; once it is rebuilt, the
// job is done with its one commit, and a person's file not committed is
// still there. Found by the red team: each job failed ("index file
// smaller than expected") and /healthz said ok.
func TestFaultDamagedGitIndexHoldsTheJob(t *testing.T) {
	for _, tc := range []struct {
		name        string
		bytes       []byte
		beforeStart bool // damaged before the server's start: its first commit meets it
	}{
		{"truncated", []byte("garbage\n"), false},
		{"bad signature", bytes.Repeat([]byte("XXXX"), 1024), false},
		{"before the start", []byte("garbage\n"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newRepo(t, 0)
			index := filepath.Join(k.Root, ".git", "index")
			var s *server
			if tc.beforeStart {
				if err := os.WriteFile(index, tc.bytes, 0o644); err != nil {
					t.Fatal(err)
				}
				s = start(t, k, nil)
			} else {
				s = start(t, k, nil)
				if j := s.post(t, httpapi.PostRequest{Title: "Before", Content: "Before the damage.\n"}); j.Status != "done" {
					t.Fatalf("post before: %+v", j)
				}
			}
			wip := filepath.Join(k.Root, "notes-in-progress.txt")
			if err := os.WriteFile(wip, []byte("a person's work\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(index, tc.bytes, 0o644); err != nil {
				t.Fatal(err)
			}
			id := s.postAsync(t, "Damaged index "+tc.name)
			h := s.waitHealth(t, "git index")
			if !bytes.Contains([]byte(h.WaitingFor), []byte("damaged")) || !bytes.Contains([]byte(h.WaitingFor), []byte("git reset")) {
				t.Errorf("/healthz: %+v", h)
			}
			if j, _ := s.Client.Job(ctx, id); j.Status == "failed" || j.Status == "done" {
				t.Fatalf("the job ended while the index was damaged: %+v", j)
			}
			if err := os.Remove(index); err != nil {
				t.Fatal(err)
			}
			git(t, k, "reset", "-q")
			j := s.waitJob(t, id, 30*time.Second)
			if j.Status != "done" {
				t.Fatalf("the job once the index was rebuilt: %+v", j)
			}
			jobCommit(t, k, "store", j)
			if h := s.health(t); h.Status != "ok" {
				t.Errorf("health after: %+v", h)
			}
			if got, err := os.ReadFile(wip); err != nil || string(got) != "a person's work\n" {
				t.Errorf("the person's file: %q %v", got, err)
			}
			if st := git(t, k, "status", "--porcelain"); st != "?? notes-in-progress.txt" {
				t.Errorf("git status:\n%s", st)
			}
		})
	}
}
