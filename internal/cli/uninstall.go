package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/install"
)

type uninstallOpts struct {
	harnesses string
}

func newUninstallCmd(app *App) *cobra.Command {
	var o uninstallOpts
	cmd := &cobra.Command{
		Use:   "uninstall --harnesses <ids>",
		Short: "Take kk out of coding agents",
		Long: `Remove what kk init --harnesses added to each named harness: kk's hook
entries in its settings files (the user's own entries and keys stay, and a
file kk created goes when nothing else is left in it), the kk skills, and
any plugin or instruction file kk wrote. The harnesses are struck from
.ai/kenkeep/.state/installed-version; when none remains, kk's block in
AGENTS.md goes too (and the file, when kk created it).

The knowledge base itself is left alone.`,
		Example: `  kk uninstall --harnesses codex
  kk uninstall --harnesses claude,codex,cursor,opencode,copilot,gemini --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("harnesses") {
				return usagef("name the harnesses to remove kk from with --harnesses, such as --harnesses claude,codex")
			}
			return runUninstall(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.harnesses, "harnesses", "", "remove kk from these coding agents (comma-separated harness ids)")
	return cmd
}

func runUninstall(ctx context.Context, app *App, o uninstallOpts) error {
	named, err := app.harnesses().Parse(o.harnesses)
	if err != nil {
		return usagef("--harnesses: %v", err)
	}
	k, err := app.KB()
	if err != nil {
		return err
	}
	res, err := install.Uninstall(ctx, k, named, install.Options{Now: app.Now(), LockCommand: app.Command})
	if res == nil {
		return err
	}
	if app.JSON {
		if perr := app.printJSON(struct {
			SchemaVersion int `json:"schema_version"`
			*install.Result
			Unchanged bool `json:"unchanged"`
		}{JSONSchemaVersion, res, len(res.Changes) == 0}); perr != nil {
			return perr
		}
		return err
	}
	for _, w := range res.Warnings {
		app.warnf("%s", w)
	}
	for _, c := range res.Changes {
		fmt.Fprintf(app.IO.Out, "%s\t%s\n", c.Action, c.Path)
	}
	if err != nil {
		return err
	}
	if len(res.Changes) == 0 {
		fmt.Fprintln(app.IO.Out, "kk: nothing to remove; nothing changed")
	}
	return nil
}
