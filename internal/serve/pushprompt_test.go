package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
)

// TestFaultSharePrePushHookThatHangsIsNamed: a --push-every tick whose
// push runs the repository's pre-push hook, which never ends (a hook
// that runs the test suite against a stalled service, a hook waiting on
// a prompt), was stopped after ShareNetTimeout and reported as "origin
// did not answer": the person looked at the network. The tick now says
// the pre-push hook did not end, naming it; the job's commit stays the
// branch's tip, the work tree clean, and origin is not moved.
func TestFaultSharePrePushHookThatHangsIsNamed(t *testing.T) {
	s, logs := startLogged(t)
	defer func(d time.Duration) { ShareNetTimeout = d }(ShareNetTimeout)
	ShareNetTimeout = time.Second
	k := s.KB
	remote := filepath.Join(t.TempDir(), "remote.git")
	git(t, k, "init", "-q", "--bare", remote)
	git(t, k, "remote", "add", "origin", remote)
	s.Backend.Share(ctx)
	before := git(t, k, "--git-dir", remote, "rev-parse", "main")

	hook := filepath.Join(k.Root, ".git", "hooks", "pre-push")
	// Bounded, so that a failing run ends; far past the test's wait.
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nexec sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if j := s.post(t, httpapi.PostRequest{Title: "Kept", Content: "Committed before the hook hung.\n"}); j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
	tip := git(t, k, "rev-parse", "HEAD")
	s.Backend.Share(ctx)
	problem := s.Backend.SharingProblem()
	if !strings.Contains(problem, "pre-push hook") || !strings.Contains(problem, hook) || strings.Contains(problem, "did not answer") {
		t.Errorf("sharing_failed %q; want the pre-push hook named, not the remote blamed\nlog:\n%s", problem, logs)
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != tip {
		t.Errorf("HEAD %s after the tick; want the job's commit %s", got, tip)
	}
	if got := git(t, k, "--git-dir", remote, "rev-parse", "main"); got != before {
		t.Errorf("origin's main moved to %s", got)
	}
	if st := git(t, k, "status", "--porcelain"); st != "" {
		t.Errorf("work tree not clean:\n%s", st)
	}
}

// fakeSSH writes an ssh that records its arguments in log and answers as
// OpenSSH does: in BatchMode, it fails at once with what (a host key it
// does not know, a key whose passphrase it may not ask); otherwise it
// waits for ever at the prompt it would show on the terminal.
func fakeSSH(t *testing.T, what string) (bin, log string) {
	t.Helper()
	dir := t.TempDir()
	bin, log = filepath.Join(dir, "ssh"), filepath.Join(dir, "args")
	script := "#!/bin/sh\necho \"$@\" >> " + log + "\ncase \" $* \" in *BatchMode=yes*) echo '" + what + "' >&2; exit 255;; esac\nexec sleep 300\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, log
}

// TestFaultSharePushNeverWaitsForAnSSHPrompt: a --push-every tick over
// ssh whose ssh would ask on the terminal (the host key of a server it
// never saw, the passphrase of a key) waited for ShareNetTimeout and was
// reported as "origin did not answer". kk serve's fetches and pushes run
// ssh in BatchMode, added to the person's own ssh command
// (core.sshCommand, GIT_SSH_COMMAND), never replacing it: ssh fails at
// once, and sharing_failed says why and what to do.
func TestFaultSharePushNeverWaitsForAnSSHPrompt(t *testing.T) {
	cases := []struct {
		name, says, advice string
		env                bool
	}{
		{"host key in core.sshCommand", "Host key verification failed.", "known_hosts", false},
		{"passphrase in GIT_SSH_COMMAND", "git@git.example.invalid: Permission denied (publickey).", "ssh-agent", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, logs := startLogged(t)
			defer func(d time.Duration) { ShareNetTimeout = d }(ShareNetTimeout)
			// A prompt waited for: the tick gives up past it.
			ShareNetTimeout = 3 * time.Second
			k := s.KB
			bin, args := fakeSSH(t, c.says)
			if c.env {
				t.Setenv("GIT_SSH_COMMAND", bin+" -o ConnectTimeout=9")
			} else {
				git(t, k, "config", "core.sshCommand", bin+" -o ConnectTimeout=9")
			}
			git(t, k, "remote", "add", "origin", "ssh://git@git.example.invalid/kb.git")
			if j := s.post(t, httpapi.PostRequest{Title: "Kept", Content: "Committed before the push.\n"}); j.Status != "done" {
				t.Fatalf("post: %+v", j)
			}
			s.Backend.Share(ctx)
			problem := s.Backend.SharingProblem()
			if !strings.Contains(problem, c.says) || !strings.Contains(problem, c.advice) || strings.Contains(problem, "did not answer") {
				t.Errorf("sharing_failed %q; want ssh's refusal (%q) and what to do (%q)\nlog:\n%s", problem, c.says, c.advice, logs)
			}
			got, err := os.ReadFile(args)
			if err != nil || !strings.Contains(string(got), "ConnectTimeout=9") || !strings.Contains(string(got), "BatchMode=yes") {
				t.Errorf("ssh ran with %q (%v); want the person's options and BatchMode", got, err)
			}
		})
	}
}

// TestShareStoppedDuringItsPushLetsThePushEnd: kk serve stopped while a
// --push-every tick's git push runs ends that push only if it has not
// ended stopGrace after the stop. It was sent SIGTERM at once, and git,
// when the signal lands while it creates a lock (the remote-tracking
// ref's, which push and fetch write at their end), leaves it:
// refs/remotes/origin/main.lock stayed, and every later fetch failed on
// it (TestServeSoakKill9, seed 601 iteration 41). A pre-push hook that
// takes a moment holds the push while the stop comes.
func TestShareStoppedDuringItsPushLetsThePushEnd(t *testing.T) {
	s := start(t, newRepo(t, 0), nil)
	k := s.KB
	remote := filepath.Join(t.TempDir(), "remote.git")
	git(t, k, "init", "-q", "--bare", remote)
	git(t, k, "remote", "add", "origin", remote)
	s.Backend.Share(ctx)
	started := filepath.Join(t.TempDir(), "push-started")
	hook := filepath.Join(k.Root, ".git", "hooks", "pre-push")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ntouch '"+started+"'\nsleep 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if j := s.post(t, httpapi.PostRequest{Title: "Shared", Content: "Pushed while the server stops.\n"}); j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
	tip := git(t, k, "rev-parse", "HEAD")
	tick, stop := context.WithCancel(ctx)
	go func() {
		for {
			if _, err := os.Stat(started); err == nil {
				stop()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	s.Backend.Share(tick)
	stop()
	if got := git(t, k, "--git-dir", remote, "rev-parse", "main"); got != tip {
		t.Errorf("origin's main is %s; want the push the stop came in to have ended, at %s", got, tip)
	}
	_ = filepath.WalkDir(filepath.Join(k.Root, ".git", "refs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".lock") {
			t.Errorf("lock left: %s", p)
		}
		return nil
	})
}
