package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/serve"
)

var update = flag.Bool("update", false, "update testscript golden output in place")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"kk": func() { os.Exit(Main()) },
	})
}

// exampleAbs is the worked example's folder, for the scripts' example
// command (a script runs in its own folder).
var exampleAbs = func() string {
	abs, err := filepath.Abs(exampleDir)
	if err != nil {
		panic(err)
	}
	return abs
}()

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
			// gentree <leaves>: write a knowledge base of that many
			// generated leaves in the working folder.
			"gentree": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: gentree <leaves>")
				}
				n, err := strconv.Atoi(args[0])
				ts.Check(err)
				_, err = benchtree.Generate(ts.MkAbs("."), benchtree.Options{Nodes: n, Seed: 1})
				ts.Check(err)
			},
			// example: copy the worked example repository (testdata/example,
			// see its README) into the working folder.
			"example": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 0 {
					ts.Fatalf("usage: example")
				}
				ts.Check(copyDir(exampleAbs, ts.MkAbs(".")))
			},
			// crlf <path>...: rewrite each file with CRLF line endings,
			// as an editor or git's core.autocrlf on Windows writes it.
			"crlf": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) == 0 {
					ts.Fatalf("usage: crlf <path>...")
				}
				for _, a := range args {
					p := ts.MkAbs(a)
					data, err := os.ReadFile(p)
					ts.Check(err)
					lf := strings.ReplaceAll(string(data), "\r\n", "\n")
					ts.Check(os.WriteFile(p, []byte(strings.ReplaceAll(lf, "\n", "\r\n")), 0o644))
				}
			},
			"pty":         ptyCmd,
			"readmeblock": readmeBlockCmd,
			"waitserve":   waitServeCmd,
			"httpget":     httpGetCmd,
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

// readmeAbs is the repository's README.md, for the readmeblock command.
var readmeAbs = func() string {
	abs, err := filepath.Abs(filepath.Join("..", "..", "README.md"))
	if err != nil {
		panic(err)
	}
	return abs
}()

// readmeBlockCmd is the script command "readmeblock <marker> <file>": it
// writes to <file> the first code block that follows the line of the
// repository's README.md starting with "<!-- <marker>:", as the README
// prints it, so that a script runs what a reader pastes. A block indented
// under a list item loses the indentation of its fence, as it does when
// the README is rendered.
func readmeBlockCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: readmeblock <marker> <file>")
	}
	data, err := os.ReadFile(readmeAbs)
	ts.Check(err)
	lines := strings.Split(string(data), "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "<!-- "+args[0]+":") {
			start = i
			break
		}
	}
	if start < 0 {
		ts.Fatalf("README.md has no line starting with <!-- %s:", args[0])
	}
	var block []string
	in, indent := false, ""
	for _, l := range lines[start+1:] {
		switch {
		case !in && strings.HasPrefix(strings.TrimLeft(l, " "), "```"):
			in, indent = true, l[:len(l)-len(strings.TrimLeft(l, " "))]
		case in && l == indent+"```":
			ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(strings.Join(block, "\n")+"\n"), 0o644))
			return
		case in:
			block = append(block, strings.TrimPrefix(l, indent))
		case strings.TrimSpace(l) != "":
			ts.Fatalf("README.md: the <!-- %s: --> line is not followed by a code block", args[0])
		}
	}
	ts.Fatalf("README.md: the code block after <!-- %s: --> does not end", args[0])
}

// ptyCmd is the script command "pty [-stdout] <program> [args...]": it
// runs the program (from the script's PATH, in the script's folder) with
// stderr on a pseudo-terminal and stdout on a pipe, as an interactive shell
// whose output is piped would. What the terminal received becomes the
// command's stderr, the pipe's bytes its stdout. With -stdout it is the
// other way round: stdout on the terminal (and becoming the command's
// stdout), stderr on the pipe, as a person reading a command's output at a
// terminal would run it. The environment is the test process's, with the
// script's values of the variables kk reads.
func ptyCmd(ts *testscript.TestScript, neg bool, args []string) {
	onStdout := len(args) > 0 && args[0] == "-stdout"
	if onStdout {
		args = args[1:]
	}
	if len(args) == 0 {
		ts.Fatalf("usage: pty [-stdout] <program> [args...]")
	}
	prog := args[0]
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, args[0]); fileExists(p) {
			prog = p
			break
		}
	}
	cmd := exec.Command(prog, args[1:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = os.Environ()
	for _, key := range []string{"PATH", "HOME", "TMPDIR", "KK_ROOT", "NO_COLOR", "TERM", "KK_GIT_HOOKS", "GIT_CONFIG_NOSYSTEM",
		"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
		cmd.Env = append(cmd.Env, key+"="+ts.Getenv(key))
	}
	ptmx, tty, err := pty.Open()
	ts.Check(err)
	defer func() { _ = ptmx.Close() }()
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, tty
	if onStdout {
		cmd.Stdout, cmd.Stderr = tty, &stdout
	}
	ts.Check(cmd.Start())
	_ = tty.Close() // the child holds it now; reading ends when the child exits
	var term bytes.Buffer
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(&term, ptmx) // ends with EIO once no process holds the terminal
		close(copied)
	}()
	err = cmd.Wait()
	<-copied
	// The terminal turns "\n" into "\r\n"; scripts match lines as written.
	termOut, pipeOut := ts.Stderr(), ts.Stdout()
	if onStdout {
		termOut, pipeOut = ts.Stdout(), ts.Stderr()
	}
	_, _ = pipeOut.Write(stdout.Bytes())
	_, _ = termOut.Write([]byte(strings.ReplaceAll(term.String(), "\r\n", "\n")))
	if err != nil && !neg {
		ts.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	if err == nil && neg {
		ts.Fatalf("%s: unexpected success", strings.Join(args, " "))
	}
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// waitServeCmd is the script command "waitserve <root>": it waits until
// the kk serve started in the background over <root> has written the URL
// it listens on (.ai/kenkeep/.state/serve.url), and sets KK_SERVER to it
// for the kk client commands that follow. The wait is bounded only so
// that a server that never starts fails the script instead of hanging it.
func waitServeCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitserve <root>")
	}
	file := filepath.Join(ts.MkAbs(args[0]), ".ai", "kenkeep", ".state", serve.URLFile)
	deadline := time.Now().Add(time.Minute)
	for {
		data, err := os.ReadFile(file)
		if url := strings.TrimSpace(string(data)); err == nil && url != "" {
			ts.Setenv("KK_SERVER", url)
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("kk serve over %s did not start: %v", args[0], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// httpGetCmd is "httpget <status> <path>": GET $KK_SERVER<path> (the
// server waitserve found), check the status code, and print the
// Content-Type line and then the body to the script's stdout.
func httpGetCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: httpget <status> <path>")
	}
	resp, err := http.Get(ts.Getenv("KK_SERVER") + args[1])
	ts.Check(err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	ts.Check(err)
	if got := strconv.Itoa(resp.StatusCode); got != args[0] {
		ts.Fatalf("GET %s: status %s, want %s\n%s", args[1], got, args[0], body)
	}
	fmt.Fprintf(ts.Stdout(), "Content-Type: %s\n%s", resp.Header.Get("Content-Type"), body)
}
