package checks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompletionDoctor(t *testing.T) {
	write := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("source <(kk completion bash)\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sys, home := t.TempDir(), t.TempDir()
	env := CompletionEnv{Home: home, SystemRoot: sys}

	// not set up: nothing to say
	if got := CompletionDoctor(env); len(got) != 0 {
		t.Fatalf("not set up: %+v", got)
	}
	// the installer's file without the package: a warning naming both
	write(filepath.Join(home, ".local", "share", "bash-completion", "completions", "kk"))
	got := CompletionDoctor(env)
	if len(got) != 1 || got[0].Level != DoctorWarn || !strings.Contains(got[0].Message, "completions/kk") ||
		!strings.Contains(got[0].Fix, "apt install bash-completion") {
		t.Fatalf("set up without the package: %+v", got)
	}
	// a line in .bashrc counts as set up too; XDG_DATA_HOME moves the file
	if err := os.RemoveAll(filepath.Join(home, ".local")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(home, ".bashrc"))
	if got := CompletionDoctor(CompletionEnv{Home: home, SystemRoot: sys, XDGDataHome: filepath.Join(home, "xdg")}); len(got) != 1 || !strings.Contains(got[0].Message, ".bashrc") {
		t.Fatalf(".bashrc: %+v", got)
	}
	// with the package: ok
	write(filepath.Join(sys, "usr", "share", "bash-completion", "bash_completion"))
	if got := CompletionDoctor(env); len(got) != 1 || got[0].Level != DoctorOK {
		t.Fatalf("with the package: %+v", got)
	}
}
