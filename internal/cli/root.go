// Package cli is kk's command line: one file per command, each a thin face
// over the domain packages. Main is the only place that decides exit codes.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kk-project/kk/harnesses/all"
	"github.com/kk-project/kk/internal/githooks"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/lock"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// Set by the release build (see .goreleaser.yaml); version.go falls back
// to the build information Go embeds.
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
	ErrTTY bool // progress and colour on stderr only when set
}

// App is what every command gets: streams, global flags and seams for tests.
type App struct {
	IO   IO
	Root string // --root or KK_ROOT; empty means search upwards
	JSON bool   // --json, on the commands that print data (ux.go)
	// harness is the root's hidden --harness, kenkeep's global flag, on
	// the commands with no --harness of their own (ux.go).
	harness string
	Quiet   bool // --quiet: no progress, warnings or notes on stderr
	Now     func() time.Time
	Getenv  func(string) string
	Getwd   func() (string, error)
	// Command is the command line, recorded in the writer lock.
	Command string
	// usageHelp is the help command a usage error points to ("kk node
	// write --help"); empty for the root's.
	usageHelp string
	// Harnesses are the harness adapters kk knows (all.Registry(); tests
	// swap in fakes through newHarnessRegistry).
	Harnesses *harness.Registry
	// kbs are the knowledge bases the command opened: the leaves their
	// reads skipped are warned about when it ends (warnSkipped).
	kbs []*store.KB
	// skipsReported is set by a command that reports skipped leaves
	// itself (kk lint, kk doctor) or must print nothing more (completion).
	skipsReported bool
	// skipsHandled names leaf files (relative to nodes/) whose skip the
	// command dealt with itself, such as the v1 leaves kk place apply
	// moved and rewrote: they are not warned about.
	skipsHandled map[string]bool
	// typed records the names flags with old names were typed by
	// (applyFlagAliases, App.flagName).
	typed map[typedFlagKey]typedName
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
		ErrTTY: isatty.IsTerminal(os.Stderr.Fd()) || isatty.IsCygwinTerminal(os.Stderr.Fd()),
	}
	if path := os.Getenv("KK_CPUPROFILE"); path != "" {
		// For measuring kk itself; see docs/benchmarks.md.
		if f, err := os.Create(path); err == nil {
			defer func() { _ = f.Close() }()
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
	root.SetArgs(kcDashFlags(root, args))
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	cmd, err := root.ExecuteContextC(ctx)
	// A scratch index (a read-only checkout, see index.openBranch) lives
	// in a temporary folder that goes with the command.
	if cerr := index.CloseScratch(); cerr != nil && err == nil {
		err = cerr
	}
	app.skipsInError(err)
	app.warnSkipped()
	app.warnHandEdits()
	if cmd != nil && cmd != root {
		app.usageHelp = cmd.CommandPath() + " --help"
	}
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
// exit code. It is the only place that decides exit codes, and the one
// error encoder: with --json every error, a usage error or a failure of
// the command, is one object of one shape on stderr (jsonError), and
// nothing else is printed about it.
func (a *App) exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var silent *SilentError
	if errors.As(err, &silent) {
		return silent.Code
	}
	e := classify(err)
	if a.JSON {
		if s, serr := stamped(map[string]any{"error": e}); serr == nil {
			_ = a.writeJSON(a.IO.Err, s)
		}
		return e.ExitCode
	}
	fmt.Fprintf(a.IO.Err, "%s %s\n", a.stderrStyle().red("kk:"), err)
	if e.ExitCode == ExitUsage {
		help := a.usageHelp
		if help == "" {
			help = "kk --help"
		}
		fmt.Fprintf(a.IO.Err, "Run '%s' for usage.\n", help)
	}
	return e.ExitCode
}

// Codes of jsonError besides the operation codes of internal/op
// (VALIDATION_ERROR, NOT_FOUND, CONFLICT, INVARIANT_VIOLATION,
// CONFIG_ERROR, INTERNAL_ERROR), which the tool faces (kk graph, kk query, kk read …)
// pass on as the MCP tools report them.
const (
	codeUsage       = "USAGE_ERROR"
	codeLocked      = "LOCKED"
	codeHTTP        = "HTTP_ERROR"
	codeInterrupted = "INTERRUPTED"
	codeError       = "ERROR"
)

// jsonError is the one shape of an error under --json, printed on stderr
// as {"schema_version":1,"error":{…}}: a code to branch on, the message a
// person would read, the exit code, and the details an operation gave.
type jsonError struct {
	Code     string         `json:"code"`
	Message  string         `json:"message"`
	ExitCode int            `json:"exit_code"`
	Details  map[string]any `json:"details,omitempty"`
}

// classify gives an error its code and exit code.
func classify(err error) jsonError {
	var usage *UsageError
	var ran *commandError
	var failed *opFailure
	var opErr *op.Error
	var held *lock.HeldError
	var api *httpapi.APIError
	e := jsonError{Code: codeError, Message: err.Error(), ExitCode: ExitFailure}
	switch {
	case errors.As(err, &usage) || !errors.As(err, &ran):
		e.Code, e.ExitCode = codeUsage, ExitUsage
	case errors.As(err, &failed):
		e.Code, e.Message, e.Details = failed.e.Code, failed.e.Message, failed.e.Details
	case errors.As(err, &opErr) && err.Error() == opErr.Error():
		// an operation's error as the core returned it, not wrapped in
		// more context: its code and details come through
		e.Code, e.Message, e.Details = opErr.Code, opErr.Message, opErr.Details
	case errors.As(err, &opErr):
		e.Code, e.Details = opErr.Code, opErr.Details
	case errors.As(err, &held):
		e.Code = codeLocked
	case errors.As(err, new(*store.ConfigError)):
		// config.yaml does not parse or holds a setting kk refuses: the
		// code and details the tools give it (op.ErrorOf)
		c := op.ErrorOf(err)
		e.Code, e.Details = c.Code, c.Details
	case errors.Is(err, store.ErrNotFound):
		e.Code = op.CodeNotFound
	case errors.As(err, &api):
		e.Code, e.Details = codeHTTP, map[string]any{"status": api.Status, "method": api.Method, "path": api.Path}
	case errors.Is(err, context.Canceled):
		e.Code = codeInterrupted
	}
	return e
}

// opFailure is a failed operation of a tool face: the operation's error,
// whose code and details --json passes on.
type opFailure struct{ e *op.Error }

func (f *opFailure) Error() string { return f.e.Code + ": " + f.e.Message + graphNextStep(f.e) }

const rootLong = `kk gives a software project a memory that lives in its own git repository
as reviewed markdown under .ai/kenkeep/, and puts the right part of it in
front of every coding agent session.

The knowledge base is found by walking up from the working directory to the
folder holding .ai/kenkeep, unless --root or KK_ROOT names it. A command
that writes waits up to 10s for another writer's lock (KK_LOCK_WAIT, a
duration such as 30s, changes that).

Exit status:
  0  success
  1  failure: invalid input, a failed check, lint errors, a held lock
  2  usage error: unknown command or flag, wrong arguments

With --json, a command that fails prints nothing on stdout and one object
on stderr, whatever went wrong:
  {"schema_version":1,"error":{"code":"NOT_FOUND","message":"…","exit_code":1,"details":{…}}}
code is USAGE_ERROR (exit 2), NOT_FOUND, VALIDATION_ERROR, CONFLICT,
INVARIANT_VIOLATION, CONFIG_ERROR (config.yaml does not parse; details
name its file and line), LOCKED, HTTP_ERROR, INTERRUPTED, INTERNAL_ERROR
or ERROR; details, when present, carry what a caller can act on (the field,
the id, the current version).`

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
			if err := app.refuseJSON(cmd); err != nil {
				return err
			}
			if err := app.checkHarnessFlag(cmd); err != nil {
				return err
			}
			app.startProgress(cmd)
			return nil
		},
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if rep := (*repeatedFlagError)(nil); errors.As(err, &rep) {
			return &UsageError{Msg: rep.Error()}
		}
		// pflag names the flag of a value it cannot read by its own
		// name: name it as it was typed (an old name: flagAliases).
		if bad := (*pflag.InvalidValueError)(nil); errors.As(err, &bad) {
			if name := app.flagName(cmd.Flags(), bad.GetFlag().Name); name != "--"+bad.GetFlag().Name {
				return &UsageError{Msg: fmt.Sprintf("invalid argument %q for %q flag: %v", bad.GetValue(), name, bad.Unwrap())}
			}
		}
		return &UsageError{Msg: err.Error()}
	})
	root.PersistentFlags().StringVar(&app.Root, "root", "", "repository folder holding .ai/kenkeep (default: search upwards; env KK_ROOT)")
	jsonFlag(root, app)
	harnessFlag(root, app)
	root.PersistentFlags().BoolVarP(&app.Quiet, "quiet", "q", false, "print no progress, warnings or notes on stderr (errors still are)")
	root.SetVersionTemplate("kk {{.Version}}\n")
	// --version has no -v: -v is --verbose wherever a command has it.
	root.Flags().Bool("version", false, "print kk's version (kk version prints more)")
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
		newPackCmd(app), newImportCmd(app),
		newHookCmd(app),
		newUninstallCmd(app), newCurateCmd(app), newBootstrapCmd(app), newPhrasingsCmd(app), newPromptCmd(app),
		newSyncCmd(app), newSearchCmd(app), newReadCmd(app), newEntryCmd(app), newQueryCmd(app), newUpsertCmd(app), newDeleteCmd(app), newCheckCmd(app), newGCCmd(app), newCompactCmd(app), newAuditCmd(app),
		newGraphCmd(app), newContextCmd(app), newChangelogCmd(app),
		newMCPCmd(app), newServeCmd(app), newClientCmd(app), newBrowseCmd(app),
		newVersionCmd(app), newCompletionCmd(app), newGitMergeRedirectsCmd(), newGitMergeSummariesCmd(), newGitMergeGeneratedCmd(app), newGitMergeInstalledCmd(), newGitResolveVersionsCmd(app),
	} {
		root.AddCommand(c)
	}
	organizeHelp(root)
	applyFlagAliases(root, app)
	addJSONFlags(root, app)
	refuseRepeatedFlags(root, app)
	addCompletions(root, app)
	markCommandErrors(root)
	return root
}

// commandError marks an error a command's own code returned (its RunE or a
// pre- or post-run hook). Cobra does not type its own errors (an unknown
// command or flag, a wrong number of arguments, a missing required flag),
// so an error that does not carry this mark came from cobra before the
// command ran, and is a usage error (exit 2). A command that wants exit 2
// returns a *UsageError itself.
type commandError struct{ err error }

func (e *commandError) Error() string { return e.err.Error() }
func (e *commandError) Unwrap() error { return e.err }

// markCommandErrors wraps every command's run functions so that their
// errors carry the commandError mark.
func markCommandErrors(c *cobra.Command) {
	mark := func(fn func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
		if fn == nil {
			return nil
		}
		return func(cmd *cobra.Command, args []string) error {
			if err := fn(cmd, args); err != nil {
				return &commandError{err}
			}
			return nil
		}
	}
	c.RunE, c.PreRunE, c.PostRunE = mark(c.RunE), mark(c.PreRunE), mark(c.PostRunE)
	c.PersistentPreRunE, c.PersistentPostRunE = mark(c.PersistentPreRunE), mark(c.PersistentPostRunE)
	for _, sub := range c.Commands() {
		markCommandErrors(sub)
	}
}

// KB returns the knowledge base the command works on.
func (a *App) KB() (*store.KB, error) {
	k, err := a.findKB()
	if err != nil {
		return nil, err
	}
	// A changeset a killed writer left half-applied is rolled back before
	// any command reads the tree.
	if _, err := txn.Recover(k); err != nil {
		return nil, err
	}
	a.kbs = append(a.kbs, k)
	return k, nil
}

// warnSkipped warns about the leaves the command's reads skipped because
// they cannot be read, each once, with every problem in it: the command
// went on with the other leaves.
func (a *App) warnSkipped() {
	var problems []error
	for _, k := range a.kbs {
		problems = append(problems, k.TakeSkipped()...)
	}
	if a.skipsReported || len(problems) == 0 {
		return
	}
	// The tree read and the index sync may both skip a file: one line each.
	var lines []string
	for _, p := range problems {
		line := p.Error()
		if ne, ok := errors.AsType[*node.Error](p); ok {
			if a.skipsHandled[ne.Path] {
				continue
			}
			line = store.DirName + "/nodes/" + ne.Path + ": " + ne.Detail()
		}
		if !slices.Contains(lines, line) {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		return
	}
	a.warnf("skipped %d leaf file(s) kk cannot read (`kk node adopt` fills in what a note written by hand lacks and gives a copied note an id of its own; `kk lint` lists every problem):\n  %s",
		len(lines), strings.Join(lines, "\n  "))
}

// warnHandEdits says, for each generated file a write replaced or removed
// while it held a person's edit, where the writer kept their version and
// where such text belongs: kk generates the file from the notes.
func (a *App) warnHandEdits() {
	for _, k := range a.kbs {
		for _, e := range k.TakeHandEdits() {
			where := "in a note (kk node write)"
			switch {
			case e.File == "ENTRY.md":
				where += ", or a one-line summary in ENTRY.md's front matter (summary:), which kk keeps"
			case e.File == "GRAPH.md":
				where = "in a note (kk node write; a link between notes is its relates_to or depends_on)"
			case e.File == "FOLDER_SUMMARIES.md":
				where = "in a note (kk node write), or a folder's one-line summary in its front matter (summaries:), which kk keeps"
			case path.Base(e.File) == "index.md":
				where += ", or the folder's one-line summary in FOLDER_SUMMARIES.md, which kk keeps"
			}
			did := "kk generates it from the notes and has replaced it"
			if e.File == "FOLDER_SUMMARIES.md" {
				did = "kk generates its text after the front matter from the summaries and has replaced it"
			}
			if e.Removed {
				did = "kk generates it from the notes of its folder, which holds none, and has removed it"
			}
			if e.Conflicted {
				// A merge where kk's merge driver was not set up: the
				// file generated again resolves git's conflict.
				done := "kk generated it again from the merged notes"
				if e.Removed {
					done = "kk removed it, as its folder holds no note"
				}
				a.warnf("%s held git's conflict markers (a merge made where kk's merge driver was not set up); %s, which resolves the conflict (`git add` it to conclude the merge); the version with the markers is kept at %s",
					store.DirName+"/"+e.File, done, store.DirName+"/"+e.Copy)
				continue
			}
			a.warnf("%s held text kk did not generate (edited by hand?); %s; your version is kept at %s: put what should stay %s",
				store.DirName+"/"+e.File, did, store.DirName+"/"+e.Copy, where)
		}
	}
}

// skipsInError marks the leaves the command's error already names (a
// store.TreeError: kk migrate okf-v3 and its pack form refuse a tree with a
// leaf they cannot read) as handled, so that warnSkipped does not name
// them a second time.
func (a *App) skipsInError(err error) {
	te, ok := errors.AsType[*store.TreeError](err)
	if !ok {
		return
	}
	for _, p := range te.Problems {
		if ne, ok := errors.AsType[*node.Error](p); ok {
			if a.skipsHandled == nil {
				a.skipsHandled = map[string]bool{}
			}
			a.skipsHandled[ne.Path] = true
		}
	}
}

// notCheckedOut returns an error wrapping store.ErrNotFound when no
// knowledge base was found from dir but git's commit holds one in a folder
// from dir up to the work tree's top: a clone made with --no-checkout, a
// sparse checkout leaving .ai/kenkeep out (running `kk init`, the usual
// advice, would start a second one beside it), or git's work tree set
// elsewhere (GIT_DIR and GIT_WORK_TREE, core.worktree) with the knowledge
// base checked out there, where checking it out again would throw away
// the notes not yet committed. Nil otherwise, or when git cannot say; it
// runs only when no knowledge base was found.
func notCheckedOut(dir string) error {
	if gitx.NoRepository(dir) {
		return nil
	}
	ctx := context.Background()
	out, err := gitx.Read(ctx, dir, "rev-parse", "--show-toplevel", "--show-prefix")
	if err != nil {
		return nil
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) < 2 || lines[0] == "" {
		return nil
	}
	top := filepath.FromSlash(lines[0])
	// The knowledge base's place in each folder from dir up to the top, as
	// a path from the top, deepest first.
	var places []string
	for p := strings.TrimSuffix(lines[1], "/"); ; p = path.Dir(p) {
		if p == "." || p == "" || p == "/" {
			places = append(places, store.DirName)
			break
		}
		places = append(places, path.Join(p, store.DirName))
	}
	out, err = gitx.Read(ctx, dir, append([]string{"ls-tree", "-d", "-z", "--name-only", "--full-tree", "HEAD", "--"}, places...)...)
	if err != nil {
		return nil
	}
	held := strings.Split(string(out), "\x00")
	for _, p := range places {
		if !slices.Contains(held, p) {
			continue
		}
		root := filepath.Join(top, filepath.FromSlash(strings.TrimSuffix(p, store.DirName)))
		if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(store.DirName))); err == nil && fi.IsDir() {
			abs, _ := filepath.Abs(dir)
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				abs = real // git names the top by its real path
			}
			if rel, err := filepath.Rel(top, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				// --root named a folder inside the work tree, below it.
				return fmt.Errorf("%w at %s, but %s above it has one; pass --root %s", store.ErrNotFound, dir, root, root)
			}
			return fmt.Errorf("%w from %s, but git's work tree %s has the knowledge base (%s): git is pointed there (GIT_DIR and GIT_WORK_TREE, or core.worktree); run kk in %s, or pass --root %s", store.ErrNotFound, dir, top, p, root, root)
		}
		return fmt.Errorf("%w in the work tree at %s, but its commit (HEAD) holds %s: the work tree does not have it checked out (a clone made with --no-checkout, or a sparse checkout); run `git checkout HEAD -- %s` or `git sparse-checkout add %s` in %s, not `kk init`, which would start a second knowledge base", store.ErrNotFound, top, p, p, p, top)
	}
	return nil
}

func (a *App) findKB() (*store.KB, error) {
	wait, err := a.lockWait()
	if err != nil {
		return nil, err
	}
	if a.Root != "" {
		k := store.New(a.Root)
		if fi, err := os.Stat(k.Dir); err != nil || !fi.IsDir() {
			if nerr := notCheckedOut(a.Root); nerr != nil {
				return nil, nerr
			}
			return nil, fmt.Errorf("%w at %s (from --root or KK_ROOT); run `kk init` there first", store.ErrNotFound, a.Root)
		}
		if lerr := leftoverOnly(k); lerr != nil {
			return nil, lerr
		}
		k.LockWait = wait
		a.setUpCloneOnWrite(k)
		return k, nil
	}
	wd, err := a.Getwd()
	if err != nil {
		return nil, err
	}
	k, err := store.Find(wd)
	if err != nil {
		if nerr := notCheckedOut(wd); nerr != nil {
			return nil, nerr
		}
		return nil, err
	}
	if lerr := leftoverOnly(k); lerr != nil {
		return nil, lerr
	}
	k.LockWait = wait
	a.setUpCloneOnWrite(k)
	return k, nil
}

// setUpCloneOnWrite has each write to k set kk's git hooks and merge
// drivers up where they never were (a teammate's clone: git clone copies
// neither), saying so once on stderr (githooks.SetUpClone).
func (a *App) setUpCloneOnWrite(k *store.KB) {
	k.AfterWrite = func(ctx context.Context) {
		res, err := githooks.SetUpClone(ctx, k)
		if err != nil {
			fmt.Fprintf(a.IO.Err, "kk: setting up kk's git hooks and merge drivers in this clone failed: %v; run `kk init` to set them up\n", err)
			return
		}
		if res != nil && res.NoHooks != "" {
			a.warnf("set up kk's merge drivers in this clone; %s", res.NoHooks)
			return
		}
		if res != nil && !a.Quiet {
			fmt.Fprintf(a.IO.Err, "kk: set up kk's git hooks (in %s) and merge drivers in this clone, as kk init does: merges of notes no longer conflict on the generated files, which the hooks regenerate; `kk uninstall --git-hooks` takes them out\n", res.Dir)
		}
	}
}

// leftoverOnly returns an error when k's folder holds nothing but what git
// ignores (.state/ and the like, store.KB.Leftovers) and HEAD has no
// knowledge base: the work tree is at a commit from before kk init, or on
// a branch without one (an orphan branch before its first commit too),
// and git left kk's ignored files behind when it checked it out. A command
// there would take them for an uninitialized knowledge base, and a write
// would start one beside them that blocks the checkout back. Nil anywhere
// else (outside git, a knowledge base being set up, one git left out of a
// sparse checkout: notCheckedOut says so).
func leftoverOnly(k *store.KB) error {
	left := k.Leftovers()
	if left == nil {
		return nil
	}
	if gitx.NoRepository(k.Root) {
		return nil
	}
	if nerr := notCheckedOut(k.Root); nerr != nil {
		return nerr
	}
	ctx := context.Background()
	branch := ""
	if b, err := gitx.Read(ctx, k.Root, "symbolic-ref", "-q", "--short", "HEAD"); err == nil {
		branch = strings.TrimSpace(string(b))
	}
	var where string
	if head, err := gitx.Read(ctx, k.Root, "log", "-1", "--format=%h\t%s", "HEAD"); err == nil {
		id, subject, _ := strings.Cut(strings.TrimSpace(string(head)), "\t")
		where = fmt.Sprintf("detached at %s, %q", id, subject)
		if branch != "" {
			where = fmt.Sprintf("branch %s, at %s, %q", branch, id, subject)
		}
	} else if branch != "" {
		// A branch before its first commit (git checkout --orphan, a new
		// repository): it has no knowledge base either.
		where = fmt.Sprintf("branch %s, which has no commit yet", branch)
	} else {
		return nil
	}
	back := "`git log --all -1 -- " + store.DirName + "` names a commit that has it"
	if prev, err := gitx.Read(ctx, k.Root, "rev-parse", "--abbrev-ref", "@{-1}"); err == nil {
		p := strings.TrimSpace(string(prev))
		if out, err := gitx.Read(ctx, k.Root, "ls-tree", "-d", "--name-only", p, "--", store.DirName); err == nil && strings.TrimSpace(string(out)) == store.DirName {
			back = fmt.Sprintf("`git switch -` goes back to %s, which has it", p)
		}
	}
	return fmt.Errorf("%w: HEAD (%s) has no %s; the %s folder here holds only what git ignores and left behind (%s). Check out a commit that has the knowledge base (%s), or run `kk init` to start one here",
		store.ErrNotFound, where, store.DirName, store.DirName, strings.Join(left, ", "), back)
}

// lockWait is KK_LOCK_WAIT: how long a command waits for another writer's
// lock (zero when unset: the default).
func (a *App) lockWait() (time.Duration, error) {
	s := a.Getenv("KK_LOCK_WAIT")
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, &UsageError{Msg: fmt.Sprintf("KK_LOCK_WAIT=%q: want a positive duration such as 30s or 500ms", s)}
	}
	return d, nil
}

// writeJSON writes v as indented JSON with a trailing newline.
func (a *App) writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printJSON writes a --json result to stdout. It is the one place that
// stamps schema_version: a result object gets it as its first key.
func (a *App) printJSON(v any) error {
	s, err := stamped(v)
	if err != nil {
		return err
	}
	return a.writeJSON(a.IO.Out, s)
}

// stamped returns v's JSON with "schema_version" as the first key of the
// top-level object (a list or a scalar stays as it is).
func stamped(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	raw := bytes.TrimSpace(buf.Bytes())
	if len(raw) == 0 || raw[0] != '{' {
		return raw, nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, err
	}
	if _, ok := keys["schema_version"]; ok {
		return nil, fmt.Errorf("internal error: a --json result carries its own schema_version")
	}
	out := fmt.Appendf(nil, `{"schema_version":%d`, JSONSchemaVersion)
	if len(keys) > 0 {
		out = append(out, ',')
	}
	return append(out, raw[1:]...), nil
}

// warnf prints a warning to stderr.
func (a *App) warnf(format string, args ...any) {
	if a.Quiet {
		return
	}
	fmt.Fprintf(a.IO.Err, a.stderrStyle().yellow("kk: warning:")+" "+format+"\n", args...)
}
