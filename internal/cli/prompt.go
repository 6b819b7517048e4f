package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/install"
	"github.com/kk-project/kk/internal/store"
)

func newPromptCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prompt",
		Short: "Print the prompts the kk skills and hooks use",
		Long: `The kk skills and the proposal-drain hook follow prompts that ship inside
kk. A repository overrides one by putting its own copy at
.ai/kenkeep/.config/prompts/<name>.md; kk prompt show prints whichever
applies, so a skill never has to guess where the prompt is.`,
	}
	cmd.AddCommand(newPromptShowCmd(app), newPromptListCmd(app))
	return cmd
}

type promptShowOpts struct {
	name string
}

func newPromptShowCmd(app *App) *cobra.Command {
	var o promptShowOpts
	cmd := &cobra.Command{
		Use:   "show <name>",
		Short: "Print a prompt: the repository's override, else the shipped copy",
		Long: `Print the prompt called <name> (kk prompt list names them): the
repository's .ai/kenkeep/.config/prompts/<name>.md when it exists, else the
copy shipped in kk. Outside a knowledge base the shipped copy is printed.
--json prints {name, source, path, content}; source is "override" or
"shipped".`,
		Example: `  kk prompt show proposal-extract`,
		Args:    oneArg("prompt show needs the name of a prompt (kk prompt list names them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return runPromptShow(cmd.Context(), app, o)
		},
	}
	return cmd
}

func runPromptShow(_ context.Context, app *App, o promptShowOpts) error {
	k, err := promptKB(app)
	if err != nil {
		return err
	}
	p, err := install.LoadPrompt(k, o.name)
	if errors.Is(err, install.ErrUnknownPrompt) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(p)
	}
	_, err = fmt.Fprint(app.IO.Out, p.Content)
	return err
}

type promptListOpts struct{}

func newPromptListCmd(app *App) *cobra.Command {
	var o promptListOpts
	cmd := &cobra.Command{
		Use:     "list",
		Example: `  kk prompt list`,
		Short:   "List the prompts and where each comes from",
		Long: `List the shipped prompts, one per line: the name, then "shipped", or
"override" and the override's path. Files in .ai/kenkeep/.config/prompts/
that override no shipped prompt are named in a warning: kk does not read
them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPromptList(cmd.Context(), app, o)
		},
	}
	return cmd
}

func runPromptList(_ context.Context, app *App, _ promptListOpts) error {
	k, err := promptKB(app)
	if err != nil {
		return err
	}
	prompts, stray, err := install.ListPrompts(k)
	if err != nil {
		return err
	}
	if app.JSON {
		if stray == nil {
			stray = []string{}
		}
		return app.printJSON(map[string]any{"prompts": prompts, "unused_overrides": stray})
	}
	for _, f := range stray {
		app.warnf("%s overrides no shipped prompt (%s); kk does not read it", f, strings.Join(install.PromptNames(), ", "))
	}
	for _, p := range prompts {
		if p.Source == install.PromptOverride {
			fmt.Fprintf(app.IO.Out, "%s\t%s\t%s\n", p.Name, p.Source, p.Path)
		} else {
			fmt.Fprintf(app.IO.Out, "%s\t%s\n", p.Name, p.Source)
		}
	}
	return nil
}

// promptKB is the knowledge base whose overrides apply: none when the
// working folder is in no knowledge base (the shipped prompts then), but
// an error when --root or KK_ROOT names a folder without one.
func promptKB(app *App) (*store.KB, error) {
	k, err := app.KB()
	if errors.Is(err, store.ErrNotFound) && app.Root == "" {
		return nil, nil
	}
	return k, err
}
