package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/kb"
)

type initOpts struct {
	upgrade bool
}

func newInitCmd(app *App) *cobra.Command {
	var o initOpts
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create the knowledge base in this repository",
		Long: `Create .ai/kenkeep/ with its settings, .gitignore block, README, generated
index files, folder summaries and installed-version record, and a .kkignore
at the repository root.

A second run changes nothing. Existing settings, folder summaries, leaves and
.kkignore are never overwritten. --upgrade refreshes the generated
scaffolding (README, .gitignore block, installed version) of an existing
knowledge base and leaves user content alone.

The repository is --root, KK_ROOT, or else the working directory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInit(cmd.Context(), app, o)
		},
	}
	cmd.Flags().BoolVarP(&o.upgrade, "upgrade", "u", false, "refresh generated scaffolding of an existing knowledge base")
	return cmd
}

func runInit(ctx context.Context, app *App, o initOpts) error {
	root := app.Root
	if root == "" {
		wd, err := app.Getwd()
		if err != nil {
			return err
		}
		root = wd
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return fmt.Errorf("--root %s is not an existing folder", root)
	}
	k := kb.New(root)
	k.Now = app.Now
	res, err := k.Init(ctx, kb.InitOptions{Upgrade: o.upgrade, Version: version, Now: app.Now(), Command: app.Command})
	if err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(map[string]any{"schema_version": JSONSchemaVersion, "root": k.Root, "created": res.Created, "updated": res.Updated, "warnings": res.Warnings, "unchanged": res.Unchanged})
	}
	for _, w := range res.Warnings {
		app.warnf("%s", w)
	}
	if res.Unchanged {
		fmt.Fprintf(app.IO.Out, "kk: knowledge base at %s is up to date; nothing changed\n", kb.DirName)
		return nil
	}
	for _, f := range res.Created {
		fmt.Fprintf(app.IO.Out, "created\t%s\n", f)
	}
	for _, f := range res.Updated {
		fmt.Fprintf(app.IO.Out, "updated\t%s\n", f)
	}
	if !o.upgrade {
		fmt.Fprintln(app.IO.Err, "Next: write knowledge with `kk node write`, then commit .ai/kenkeep and .kkignore.")
	}
	return nil
}
