package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/serve"
	"github.com/kk-project/kk/internal/store"
)

func newImportCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Bring knowledge kept by another tool into the tree",
	}
	cmd.AddCommand(newImportKnowledgedCmd(app))
	return cmd
}

type importKnowledgedOpts struct {
	dir string
}

func newImportKnowledgedCmd(app *App) *cobra.Command {
	var o importKnowledgedOpts
	return &cobra.Command{
		Use:   "knowledged <dir>",
		Short: "Import the notes of a knowledged repository",
		Long: `Bring the notes of a knowledged repository (<dir>, a working copy) into
the knowledge tree, in one transaction, for a move from knowledged to kk
serve. Every markdown file with front matter and a title (INDEX.md, .git/
and .knowledged/ aside) becomes a leaf in the same folder under nodes/, with
its title, description, tags and body; a practice when its title is
imperative, else a map. Its created and modified times become
kk_created_at and kk_updated_at, and kk_derived_from records
"knowledged:<path>". Files without such front matter are skipped and
listed. A folder whose name kk does not make (one holding a space, a
Windows device name such as con, one ending with a dot) becomes the
nearest name it does (Meeting-Notes, con-notes), and the import says so
("renamed" in --json).

A note imported before is updated in place from its source when the note
changed since (kk_source_sha256 records its bytes), so running the import
again changes nothing, and what was written in kk to a leaf whose note did
not change stays. The index files are regenerated; commit the
result with git.`,
		Example: `  kk import knowledged ~/knowledge
  kk --root ~/notes import knowledged ~/knowledge --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.dir = args[0]
			return runImportKnowledged(cmd.Context(), app, o)
		},
	}
}

func runImportKnowledged(ctx context.Context, app *App, o importKnowledgedOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	k.Now = app.Now
	dir, err := app.absPath(o.dir)
	if err != nil {
		return err
	}
	if isInside(resolveExisting(k.Dir), resolveExisting(dir)) {
		return op.New(op.CodeValidation, map[string]any{"argument": "dir"},
			"%s is inside the knowledge base (%s); name the working copy of the knowledged repository to import", o.dir, store.DirName)
	}
	res, err := serve.ImportKnowledged(ctx, k, dir)
	if err != nil {
		return err
	}
	app.phrasingsHint(ctx, k)
	if app.JSON {
		return app.printJSON(res)
	}
	for _, group := range []struct {
		action string
		paths  []string
	}{{"created", res.Created}, {"updated", res.Updated}} {
		for _, p := range group.paths {
			fmt.Fprintf(app.IO.Out, "%s\t.ai/kenkeep/nodes/%s\n", group.action, p)
		}
	}
	for _, s := range res.Skipped {
		app.warnf("skipped %s: %s", s.File, s.Reason)
	}
	for _, r := range res.Renamed {
		app.notef("the notes of folder %q are in nodes/%s: kk makes no folder named so (a space, a Windows device name or a trailing dot)", r.From, r.To)
	}
	app.notef("%d created, %d updated, %d unchanged, %d skipped", len(res.Created), len(res.Updated), len(res.Unchanged), len(res.Skipped))
	return nil
}
