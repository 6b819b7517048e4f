package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
)

// decodeJSONError checks that stderr is exactly one error object of the
// one --json error shape and returns its error part.
func decodeJSONError(t *testing.T, what, stderr string) jsonError {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stderr))
	dec.DisallowUnknownFields()
	var got struct {
		SchemaVersion int       `json:"schema_version"`
		Error         jsonError `json:"error"`
	}
	if err := dec.Decode(&got); err != nil {
		t.Errorf("%s: stderr is not one --json error object: %v\n%s", what, err, stderr)
		return jsonError{}
	}
	if dec.More() {
		t.Errorf("%s: stderr holds more than the error object:\n%s", what, stderr)
	}
	if got.SchemaVersion != JSONSchemaVersion || got.Error.Code == "" || got.Error.Message == "" || got.Error.ExitCode == 0 {
		t.Errorf("%s: incomplete error object %+v\n%s", what, got, stderr)
	}
	return got.Error
}

// leafCommands lists the command paths of every runnable command without
// subcommands (the leaves), hidden ones included, as argument lists.
func leafCommands() [][]string {
	app := &App{IO: IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, Now: time.Now,
		Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return ".", nil }}
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.Name() == "help" {
			return
		}
		if !c.HasSubCommands() {
			out = append(out, path)
		}
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(newRootCmd(app), nil)
	return out
}

// Every command, asked for --json, reports a failure as one error object
// of one shape on stderr and prints nothing on stdout: a usage error (an
// unknown flag) and a failure of the command itself (no knowledge base
// here, a missing argument, no server) alike.
func TestJSONErrorOneShapeEveryCommand(t *testing.T) {
	dir := t.TempDir() // no knowledge base in it
	for _, path := range leafCommands() {
		name := "kk " + strings.Join(path, " ")
		if path[0] == "hook" {
			continue // a hook always exits 0 and reports in the harness's way
		}
		code, stdout, stderr := run(t, dir, "", append(append([]string{}, path...), "--json", "--no-such-flag")...)
		if code != ExitUsage || stdout != "" {
			t.Errorf("%s --json --no-such-flag: exit %d, stdout %q", name, code, stdout)
		}
		if e := decodeJSONError(t, name+" --no-such-flag", stderr); e.Code != codeUsage || e.ExitCode != ExitUsage {
			t.Errorf("%s --json --no-such-flag: %+v", name, e)
		}
		switch path[0] {
		case "serve", "mcp", "browse", "init", "curate", "bootstrap", "phrasings", "completion", "version":
			continue // these start a server or an agent, or work without a knowledge base
		case "node":
			if path[1] == "add" {
				continue
			}
		case "client":
			path = append(path, "--server", "http://127.0.0.1:1")
		}
		code, stdout, stderr = run(t, dir, "", append(append([]string{}, path...), "--json")...)
		if code == ExitOK {
			continue // works without a knowledge base (kk schema, kk prompt list …)
		}
		if stdout != "" {
			t.Errorf("%s --json failed (exit %d) with stdout %q", name, code, stdout)
		}
		if e := decodeJSONError(t, name, stderr); e.ExitCode != code {
			t.Errorf("%s --json: exit %d, error object says %d", name, code, e.ExitCode)
		}
	}
}

// A failed operation of a tool face and a usage error share the shape and
// the stream; the operation's code and details come through.
func TestJSONErrorOperation(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := run(t, dir, "", "init", "--no-git-hooks"); code != 0 {
		t.Fatalf("init: %d %s", code, errs)
	}
	code, stdout, stderr := run(t, dir, "", "node", "show", "nope", "--json")
	if code != ExitFailure || stdout != "" {
		t.Fatalf("node show nope --json: exit %d, stdout %q", code, stdout)
	}
	e := decodeJSONError(t, "node show nope", stderr)
	if e.Code != "NOT_FOUND" || e.Message != `no node with id "nope"` || e.Details["id"] != "nope" {
		t.Errorf("node show nope --json: %+v", e)
	}
	code, stdout, stderr = run(t, dir, "", "node", "show", "--json")
	if code != ExitUsage || stdout != "" {
		t.Fatalf("node show --json: exit %d, stdout %q", code, stdout)
	}
	if e := decodeJSONError(t, "node show", stderr); e.Code != codeUsage {
		t.Errorf("node show --json: %+v", e)
	}
	// Without --json: one human line (and the usage hint for a usage error).
	code, stdout, stderr = run(t, dir, "", "node", "show", "nope")
	if code != ExitFailure || stdout != "" || !strings.HasPrefix(stderr, `kk: NOT_FOUND: no node with id "nope"`) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("node show nope: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// classify gives every kind of error its code: an operation's error keeps
// its code and details, wrapped in context or not.
func TestJSONErrorClassify(t *testing.T) {
	conflict := op.New(op.CodeConflict, map[string]any{"currentVersion": 3}, "atom x is at version 3, not 2")
	for _, tc := range []struct {
		err  error
		code string
		exit int
		msg  string
	}{
		{&commandError{conflict}, op.CodeConflict, ExitFailure, "atom x is at version 3, not 2"},
		{&commandError{fmt.Errorf("writing x: %w", conflict)}, op.CodeConflict, ExitFailure, "writing x: CONFLICT: atom x is at version 3, not 2"},
		{&commandError{&opFailure{conflict}}, op.CodeConflict, ExitFailure, "atom x is at version 3, not 2"},
		{&commandError{usagef("bad")}, codeUsage, ExitUsage, "bad"},
		{errors.New(`unknown flag: --nope`), codeUsage, ExitUsage, "unknown flag: --nope"}, // cobra's own
		{&commandError{fmt.Errorf("reading: %w", store.ErrNotFound)}, op.CodeNotFound, ExitFailure, ""},
		{&commandError{context.Canceled}, codeInterrupted, ExitFailure, ""},
		{&commandError{errors.New("disk full")}, codeError, ExitFailure, "disk full"},
	} {
		e := classify(tc.err)
		if e.Code != tc.code || e.ExitCode != tc.exit || tc.msg != "" && e.Message != tc.msg {
			t.Errorf("classify(%v) = %+v; want %s, exit %d, %q", tc.err, e, tc.code, tc.exit, tc.msg)
		}
	}
	if e := classify(&commandError{conflict}); e.Details["currentVersion"] != 3 {
		t.Errorf("details lost: %+v", e)
	}
}

// An interrupted command (Ctrl-C, SIGTERM: its context cancelled) is
// INTERRUPTED whatever it runs; the commands that run a tool's operation
// (search, read, query, graph…) said INTERNAL_ERROR and sent the person
// to kk doctor.
func TestInterruptedOperationIsInterrupted(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := run(t, dir, "", "init"); code != 0 {
		t.Fatalf("init: %d %s", code, errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{
		{"search", "retry", "--json"},
		{"read", "practice-x", "--json"},
		{"query", "--type", "req", "--json"},
	} {
		var out, errb bytes.Buffer
		code := Run(ctx, args, IO{In: strings.NewReader(""), Out: &out, Err: &errb}, func(k string) string { return map[string]string{"KK_ROOT": dir}[k] })
		if code != ExitFailure || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q", args, code, out.String())
			continue
		}
		if e := decodeJSONError(t, args[0], errb.String()); e.Code != codeInterrupted || strings.Contains(e.Message, "kk doctor") {
			t.Errorf("%v: %+v", args, e)
		}
	}
}
