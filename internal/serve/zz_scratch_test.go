package serve

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
)

func TestZZSymlinks(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	note := s.post(t, httpapi.PostRequest{Title: "Real", Content: "Real.\n"})
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.md")
	os.WriteFile(victim, []byte("---\ntitle: V\n---\nvictim\n"), 0o644)
	if err := os.Symlink(outside, k.NodePath("out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, k.NodePath("leaf-link.md")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"out/victim.md", "leaf-link.md"} {
		r, _ := s.Client.Get(ctx, p)
		t.Logf("GET %s: %+v", p, r)
		j, err := s.Client.Delete(ctx, p)
		t.Logf("DELETE %s: %+v %v", p, j, err)
		if err == nil {
			j = s.waitJob(t, j.JobID, time.Minute)
			t.Logf(" -> %+v", j)
		}
		j, err = s.Client.Edit(ctx, httpapi.EditRequest{Path: p, Content: "pwned\n"})
		t.Logf("PUT %s: %+v %v", p, j, err)
		if err == nil {
			j = s.waitJob(t, j.JobID, time.Minute)
			t.Logf(" -> %+v", j)
		}
	}
	data, err := os.ReadFile(victim)
	t.Logf("victim: %q %v", data, err)
	_ = note
	t.Log(git(t, k, "status", "--porcelain"))
	t.Log(git(t, k, "log", "--format=%s", "-5"))
}
