//go:build unix

package gitx

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// OpenRepo over a git that fails to read HEAD (for a moment: a full
// process table, a repack, a read error) said "HEAD is detached: check
// out the branch to serve", sending the person to fix a HEAD that is
// fine. It says what git said; a HEAD that really is detached is still
// called so.
func TestOpenRepoSaysWhatGitCouldNotDo(t *testing.T) {
	dir, _ := committedRepo(t)
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	bin := t.TempDir()
	script := "#!/bin/sh\nfor a in \"$@\"; do\n  if [ \"$a\" = symbolic-ref ]; then echo 'fatal: injected read failure' >&2; exit 128; fi\ndone\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	path := os.Getenv("PATH")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+path)
	_, err = OpenRepo(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "injected read failure") || strings.Contains(err.Error(), "detached") {
		t.Fatalf("over a failing git: %v", err)
	}

	t.Setenv("PATH", path)
	gitOut(t, dir, "checkout", "-q", "--detach")
	if _, err := OpenRepo(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "HEAD is detached") {
		t.Fatalf("on a detached HEAD: %v", err)
	}
}
