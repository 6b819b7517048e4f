// Package cli is kk's command line: one file per command, each a thin face
// over the domain packages. Main is the only place that decides exit codes.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/kk-project/kk/harnesses/all"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/kb"
	"github.com/kk-project/kk/internal/lock"
)

// Set by the release build (see .goreleaser.yaml).
var (
	version = "dev"
	commit  = ""
	date    = ""
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// JSONSchemaVersion is the version of kk's --json output shapes.
const JSONSchemaVersion = 1

// IO holds the streams a command reads and writes.
type IO struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	InTTY  bool
	OutTTY bool
}

// App is what every command gets: streams, global flags and seams for tests.
type App struct {
	IO     IO
	Root   string // --root or KK_ROOT; empty means search upwards
	JSON   bool   // --json
	Now    func() time.Time
	Getenv func(string) string
	Getwd  func() (string, error)
	// Command is the command line, recorded in the writer lock.
	Command string
	// Harnesses are the harness adapters kk knows (all.Registry(); tests
	// swap in fakes through newHarnessRegistry).
	Harnesses *harness.Registry
}

// newHarnessRegistry builds App.Harnesses. Tests replace it once, before
// any command runs, to add fake adapters.
var newHarnessRegistry = all.Registry

// harnesses returns the adapter registry, building the default one for an
// App made without it.
func (a *App) harnesses() *harness.Registry {
	if a.Harnesses == nil {
		a.Harnesses = newHarnessRegistry()
	}
	return a.Harnesses
}

// UsageError is a mistake in how kk was called. It exits 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error { return &UsageError{Msg: fmt.Sprintf(format, args...)} }

// SilentError carries an exit code for a failure whose explanation the
// command has already printed (a failed --check, lint errors).
type SilentError struct{ Code int }

func (e *SilentError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// Main runs kk with the process's arguments and streams and returns the
// exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	streams := IO{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		InTTY:  isatty.IsTerminal(os.Stdin.Fd()) || isatty.IsCygwinTerminal(os.Stdin.Fd()),
		OutTTY: isatty.IsTerminal(os.Stdout.Fd()) || isatty.IsCygwinTerminal(os.Stdout.Fd()),
	}
	if path := os.Getenv("KK_CPUPROFILE"); path != "" {
		// For measuring kk itself; see docs/benchmarks.md.
		if f, err := os.Create(path); err == nil {
			defer f.Close()
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	return Run(ctx, os.Args[1:], streams, os.Getenv)
}

// Run runs kk with the given arguments and streams and returns the exit code.
func Run(ctx context.Context, args []string, streams IO, getenv func(string) string) int {
	app := &App{IO: streams, Now: time.Now, Getenv: getenv, Getwd: os.Getwd, Command: "kk " + strings.Join(args, " "), Harnesses: newHarnessRegistry()}
	root := newRootCmd(app)
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	err := root.ExecuteContext(ctx)
	if err != nil && !app.JSON {
		// Cobra may fail before it parses flags (an unknown command); the
		// error should still come as JSON when --json was asked for.
		for _, a := range args {
			if a == "--" {
				break
			}
			if a == "--json" || a == "--json=true" {
				app.JSON = true
			}
		}
	}
	return app.exitCode(err)
}

// exitCode prints err (as text, or as JSON with --json) and maps it to an
// exit code. It is the only place that decides exit codes.
func (a *App) exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var silent *SilentError
	if errors.As(err, &silent) {
		return silent.Code
	}
	code, kind := ExitFailure, "error"
	var usage *UsageError
	var held *lock.HeldError
	switch {
	case errors.As(err, &usage) || isCobraUsage(err):
		code, kind = ExitUsage, "usage"
	case errors.As(err, &held):
		kind = "locked"
	case errors.Is(err, kb.ErrNotFound):
		kind = "not_found"
	case errors.Is(err, context.Canceled):
		kind = "interrupted"
	}
	if a.JSON {
		a.writeJSON(a.IO.Err, map[string]any{"schema_version": JSONSchemaVersion, "error": map[string]any{"kind": kind, "message": err.Error(), "exit_code": code}})
		return code
	}
	fmt.Fprintf(a.IO.Err, "kk: %s\n", err)
	if code == ExitUsage {
		fmt.Fprintln(a.IO.Err, "Run 'kk --help' or 'kk <command> --help' for usage.")
	}
	return code
}

// isCobraUsage recognises cobra's own argument and flag errors, which it
// does not type.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "requires exactly", "if any flags in the group", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

const rootLong = `kk gives a software project a memory that lives in its own git repository
as reviewed markdown under .ai/kenkeep/, and puts the right part of it in
front of every coding agent session.

The knowledge base is found by walking up from the working directory to the
folder holding .ai/kenkeep, unless --root or KK_ROOT names it.

Exit status:
  0  success
  1  failure: invalid input, a failed check, lint errors, a held lock
  2  usage error: unknown command or flag, wrong arguments`

func newRootCmd(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:           "kk",
		Short:         "Project memory for coding agents",
		Long:          rootLong,
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if app.Root == "" {
				app.Root = app.Getenv("KK_ROOT")
			}
			return nil
		},
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return &UsageError{Msg: err.Error()} })
	root.PersistentFlags().StringVar(&app.Root, "root", "", "repository folder holding .ai/kenkeep (default: search upwards; env KK_ROOT)")
	root.PersistentFlags().BoolVar(&app.JSON, "json", false, "print machine-readable JSON")
	root.SetVersionTemplate("kk {{.Version}}\n")
	for _, c := range []*cobra.Command{
		newInitCmd(app),
		newNodeCmd(app),
		newIndexCmd(app),
		newLintCmd(app),
		newStatusCmd(app),
		newDoctorCmd(app),
		newMigrateCmd(app),
		newSchemaCmd(app),
		newValidateCmd(app),
		newSessionLogCmd(app), newCurateDedupCmd(app), newCuratePersistCmd(app), newConflictCmd(app), newDraftsCmd(app),
		newRebalanceCmd(app), newPlaceCmd(app),
		newFinddocsCmd(app), newFreshnessCmd(app), newLogsCmd(app), newUsageCmd(app),
		newPackCmd(app),
		newHookCmd(app),
		newUninstallCmd(app), newCurateCmd(app), newBootstrapCmd(app), newPhrasingsCmd(app), newPromptCmd(app),
		newSyncCmd(app), newSearchCmd(app), newReadCmd(app), newEntryCmd(app), newQueryCmd(app), newUpsertCmd(app), newDeleteCmd(app), newCheckCmd(app), newGCCmd(app), newCompactCmd(app),
		newGraphCmd(app), newContextCmd(app), newChangelogCmd(app),
		newMCPCmd(app),
	} {
		root.AddCommand(c)
	}
	return root
}

func versionString() string {
	v := version
	if commit != "" {
		v += " (" + commit
		if date != "" {
			v += ", " + date
		}
		v += ")"
	}
	return v
}

// KB returns the knowledge base the command works on.
func (a *App) KB() (*kb.KB, error) {
	if a.Root != "" {
		k := kb.New(a.Root)
		if fi, err := os.Stat(k.Dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%w at %s (from --root or KK_ROOT); run `kk init` there first", kb.ErrNotFound, a.Root)
		}
		return k, nil
	}
	wd, err := a.Getwd()
	if err != nil {
		return nil, err
	}
	return kb.Find(wd)
}

// writeJSON writes v as indented JSON with a trailing newline.
func (a *App) writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printJSON writes a --json result to stdout, stamped with schema_version.
func (a *App) printJSON(v any) error {
	return a.writeJSON(a.IO.Out, v)
}

// warnf prints a warning to stderr.
func (a *App) warnf(format string, args ...any) {
	fmt.Fprintf(a.IO.Err, "kk: warning: "+format+"\n", args...)
}
