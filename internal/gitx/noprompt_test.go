package gitx

import (
	"context"
	"os/exec"
	"slices"
	"testing"
)

// TestNoPromptAddsBatchModeToThePersonsSSH: fetches and pushes run ssh
// in BatchMode, added to the person's own ssh command, in git's order
// (GIT_SSH_COMMAND, then core.sshCommand); a command that is not
// OpenSSH's ssh (plink, a wrapper) and GIT_SSH are left as they are.
func TestNoPromptAddsBatchModeToThePersonsSSH(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	ctx := context.Background()
	set := func(k, v string) {
		if out, err := exec.Command("git", "-C", dir, "config", k, v).CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
	}
	t.Setenv("GIT_SSH_COMMAND", "")
	t.Setenv("GIT_SSH", "")
	cases := []struct {
		name      string
		env, conf string
		gitSSH    bool
		want      []string
	}{
		{"none", "", "", false, []string{"GIT_SSH_COMMAND=ssh -o BatchMode=yes"}},
		{"config", "", "/opt/bin/ssh -i key", false, []string{"GIT_SSH_COMMAND=/opt/bin/ssh -i key -o BatchMode=yes"}},
		{"environment first", "ssh -p 2222", "/opt/bin/ssh -i key", false, []string{"GIT_SSH_COMMAND=ssh -p 2222 -o BatchMode=yes"}},
		{"plink", "", "plink -batch", false, nil},
		{"GIT_SSH", "", "", true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GIT_SSH_COMMAND", c.env)
			if c.gitSSH {
				t.Setenv("GIT_SSH", "/opt/bin/my-ssh")
			}
			if c.conf != "" {
				set("core.sshCommand", c.conf)
			} else {
				_ = exec.Command("git", "-C", dir, "config", "--unset", "core.sshCommand").Run()
			}
			if got := noPrompt(ctx, dir); !slices.Equal(got, c.want) {
				t.Errorf("noPrompt = %q; want %q", got, c.want)
			}
		})
	}
}
