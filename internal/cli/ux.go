package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/progress"
)

// noJSON marks (in cobra's Annotations) a command that prints no data: it
// gets no --json flag. The value says what it prints instead.
const noJSON = "kk:no-json"

// jsonFlag declares --json on the root, hidden: it lets "kk --json <command>"
// find its command, and reaches every command. addJSONFlags then shows it
// on the commands that print data, and refuseJSON refuses it on the others.
func jsonFlag(root *cobra.Command, app *App) {
	root.PersistentFlags().BoolVar(&app.JSON, "json", false, "print machine-readable JSON")
	_ = root.PersistentFlags().MarkHidden("json")
}

// harnessFlag declares --harness on the root, hidden, as kenkeep registers
// it on every command (reference §1): a test or script written for
// kenkeep may pass it to any command, before or after the command's name.
// The commands that run or check a harness (the launchers, doctor, hook)
// declare their own --harness, which takes the value wherever it is
// given; on the others checkHarnessFlag only checks that it names a
// harness.
func harnessFlag(root *cobra.Command, app *App) {
	root.PersistentFlags().StringVar(&app.harness, "harness", "", "harness id (used by the commands that run or check a harness)")
	_ = root.PersistentFlags().MarkHidden("harness")
}

// checkHarnessFlag refuses a root --harness that names no harness.
func (a *App) checkHarnessFlag(cmd *cobra.Command) error {
	if a.harness == "" || cmd.Flags().Lookup("harness") != cmd.Root().PersistentFlags().Lookup("harness") {
		return nil // not given, or the command's own
	}
	_, err := a.harnessFlag(a.harness)
	return err
}

// addJSONFlags gives every command that does something its own --json,
// shown in its help, except the commands marked noJSON: the hook, the MCP
// server, the launchers and completion, whose output belongs to someone
// else. Groups of commands (kk node, kk graph) have none either.
func addJSONFlags(root *cobra.Command, app *App) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if _, no := c.Annotations[noJSON]; c.Runnable() && !c.HasSubCommands() && !no {
			c.Flags().BoolVar(&app.JSON, "json", false, "print machine-readable JSON")
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// refuseJSON is the usage error for --json on a command that prints no
// data. The hook reports it in its own way (a hook always exits 0).
func (a *App) refuseJSON(cmd *cobra.Command) error {
	if !a.JSON || cmd.Name() == "hook" || cmd.Flags().Lookup("json") != cmd.Root().PersistentFlags().Lookup("json") {
		return nil // no --json, or the command's own
	}
	what, ok := cmd.Annotations[noJSON]
	if !ok {
		what = "it only groups commands"
	}
	return usagef("%s prints no data (%s), so it has no --json", cmd.CommandPath(), what)
}

// startProgress puts a progress Terminal on stderr into the command's
// context when stderr is a terminal and --quiet is off. The hook and the
// MCP server report nothing: they run under a coding agent.
func (a *App) startProgress(cmd *cobra.Command) {
	if !a.IO.ErrTTY || a.Quiet {
		return
	}
	for c := cmd; c != nil; c = c.Parent() {
		if c.Name() == "hook" || c.Name() == "mcp" {
			return
		}
	}
	cmd.SetContext(progress.With(cmd.Context(), progress.NewTerminal(a.IO.Err, a.Now)))
}

// notef prints a note on stderr (what was done, what to do next), unless
// --quiet.
func (a *App) notef(format string, args ...any) {
	if a.Quiet {
		return
	}
	fmt.Fprintf(a.IO.Err, "kk: "+format+"\n", args...)
}

// noResults tells a person at a terminal that a listing came out empty,
// and what to try instead. In a pipe, and with --json or --quiet, an empty
// result is no output at all, so scripts see nothing to parse.
func (a *App) noResults(format string, args ...any) {
	if !a.IO.OutTTY || a.JSON || a.Quiet {
		return
	}
	fmt.Fprintf(a.IO.Err, "kk: "+format+"\n", args...)
}

// listLimit is how many items of a long list (files written, folders
// lacking a summary) a command prints without --verbose; --json always
// carries them all.
const listLimit = 10

// capList returns the items a command prints: every one with verbose, else
// the first listLimit, and how many it left out.
func capList[T any](items []T, verbose bool) ([]T, int) {
	if verbose || len(items) <= listLimit {
		return items, 0
	}
	return items[:listLimit], len(items) - listLimit
}

// style colours text for one stream, or leaves it as it is.
type style struct{ on bool }

// colour reports whether a stream that is a terminal (tty) may be
// coloured: not when NO_COLOR is set to anything (no-color.org), nor on a
// dumb terminal.
func (a *App) colour(tty bool) style {
	if !tty || a.Getenv == nil {
		return style{}
	}
	return style{on: a.Getenv("NO_COLOR") == "" && a.Getenv("TERM") != "dumb"}
}

func (a *App) stdoutStyle() style { return a.colour(a.IO.OutTTY) }
func (a *App) stderrStyle() style { return a.colour(a.IO.ErrTTY) }

func (s style) paint(code, text string) string {
	if !s.on {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s style) red(text string) string    { return s.paint("1;31", text) }
func (s style) yellow(text string) string { return s.paint("33", text) }
func (s style) green(text string) string  { return s.paint("32", text) }
