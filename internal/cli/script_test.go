package cli

import (
	"flag"
	"os"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "update testscript golden output in place")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"kk": func() { os.Exit(Main()) },
	})
}

// TestScripts runs the end-to-end scripts in testdata/script. Set KK_UPDATE=1
// (or pass -update) to rewrite their golden files.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update || os.Getenv("KK_UPDATE") == "1",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// mkfile <path> <bytes> [<prefix-file>]: write a file of the given
			// size, starting with the prefix file's content, padded with "x".
			"mkfile": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: mkfile <path> <bytes> [<prefix-file>]")
				}
				size, err := strconv.Atoi(args[1])
				ts.Check(err)
				var data []byte
				if len(args) > 2 {
					data = []byte(ts.ReadFile(args[2]))
				}
				for len(data) < size {
					data = append(data, 'x')
				}
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), data, 0o644))
			},
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("KK_ROOT", "")
			env.Setenv("GIT_AUTHOR_NAME", "kk test")
			env.Setenv("GIT_AUTHOR_EMAIL", "kk@example.invalid")
			env.Setenv("GIT_COMMITTER_NAME", "kk test")
			env.Setenv("GIT_COMMITTER_EMAIL", "kk@example.invalid")
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("HOME", env.WorkDir)
			// kk init installs git hooks that sync in the background; scripts
			// wait for them so that no sync outlives its script.
			env.Setenv("KK_GIT_HOOKS", "wait")
			return nil
		},
	})
}
