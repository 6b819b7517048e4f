package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/discover"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/store"
)

type finddocsOpts struct {
	from    string
	hashes  bool
	changed bool
	memory  bool
}

func newFinddocsCmd(app *App) *cobra.Command {
	var o finddocsOpts
	cmd := &cobra.Command{
		Use:   "finddocs",
		Short: "List the documentation files a bootstrap can turn into nodes",
		Long: `List the repository's markdown files (*.md, any case) that a bootstrap
can turn into knowledge nodes, relative to the repository root, sorted.
It needs no knowledge base: before kk init the repository is the one init
would set up.

Left out:
  - folders named .git or node_modules, and the knowledge base itself
    (.ai/kenkeep/);
  - legal, community and history boilerplate at any depth: LICENSE,
    COPYING, NOTICE, CODE_OF_CONDUCT, CONTRIBUTORS, AUTHORS, MAINTAINERS,
    CHANGELOG, CHANGES, HISTORY, RELEASE_NOTES (.md), anything under a
    releases/ folder, and generated ENTRY.md, INDEX.md, GRAPH.md, index.md;
  - files git ignores: inside a git work tree git itself lists the files
    (tracked, plus untracked ones no .gitignore excludes); outside git the
    tree is walked and the root .gitignore applies;
  - files matched by the root .kkignore (gitignore syntax, relative to the
    repository root).

--from limits the list to one folder (relative to the repository root);
ignore patterns stay anchored at the root. It must exist, be a folder and
lie inside the root, or finddocs exits 1.

Each line is "+ <path>", or "+ <path>\t<sha256>" with --with-hashes.
--changed lists only the files whose content differs from the hash the
bootstrap state (.ai/kenkeep/.state/bootstrap-state.json, written by
"kk node write --source-doc --source-hash") recorded, so a re-run skips
unchanged documents; it implies --with-hashes, since the hashes are what a
bootstrap records for each document it turns into nodes.

--memory lists the coding agents' own memory files instead, for the
harnesses kk is installed into (all of them when none is): CLAUDE.md,
CLAUDE.local.md and Claude Code's auto memory of the project, AGENTS.md,
GEMINI.md, Copilot's instructions, Cursor's rules, and their user-level
counterparts under the home folder. Each line is "+ <path>\t<harnesses>",
the path relative to the repository root, or absolute for a user's file.
/kk-bootstrap offers them to the user before reading any.`,
		Example: `  kk finddocs
  kk finddocs --from docs --with-hashes
  kk finddocs --changed --json
  kk finddocs --memory`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.memory && (o.from != "" || o.hashes || o.changed) {
				return usagef("--memory lists memory files only; drop --from, --with-hashes and --changed")
			}
			return runFinddocs(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.from, "from", "", "only list files under this folder (relative to the repository root)")
	cmd.Flags().BoolVar(&o.hashes, "with-hashes", false, "print each file's SHA-256")
	cmd.Flags().BoolVar(&o.changed, "changed", false, "only files new or changed since the bootstrap state recorded them")
	cmd.Flags().BoolVar(&o.memory, "memory", false, "list the coding agents' memory files (CLAUDE.md and the like) instead")
	return cmd
}

func runFinddocs(ctx context.Context, app *App, o finddocsOpts) error {
	k, err := app.KB()
	if errors.Is(err, store.ErrNotFound) && app.Root == "" {
		// finddocs reads the repository, not the knowledge base: before
		// kk init it lists the repository init would set up (nothing
		// bootstrapped yet, no harness installed).
		wd, werr := app.Getwd()
		if werr != nil {
			return werr
		}
		k, err = store.New(initRoot(ctx, wd)), nil
	}
	if err != nil {
		return err
	}
	if o.memory {
		return runMemoryFiles(app, k)
	}
	res, err := discover.Find(ctx, k.Root, discover.Options{From: o.from, Hashes: o.hashes || o.changed})
	if err != nil {
		return err
	}
	type jsonDoc struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256,omitempty"`
		Status string `json:"status,omitempty"`
	}
	docs := make([]jsonDoc, 0, len(res.Docs))
	if o.changed {
		st, err := curate.ReadBootstrapState(k)
		if err != nil {
			return err
		}
		for _, c := range discover.Changed(res.Docs, st) {
			docs = append(docs, jsonDoc{Path: c.Path, SHA256: c.SHA256, Status: c.Status})
		}
	} else {
		for _, d := range res.Docs {
			docs = append(docs, jsonDoc{Path: d.Path, SHA256: d.SHA256})
		}
	}
	if !o.hashes && !o.changed {
		for i := range docs {
			docs[i].SHA256 = ""
		}
	}
	if app.JSON {
		return app.printJSON(struct {
			Source string    `json:"source"`
			Docs   []jsonDoc `json:"docs"`
		}{res.Source, docs})
	}
	switch {
	case len(docs) == 0 && o.changed:
		app.noResults("no document is new or changed since the last bootstrap")
	case len(docs) == 0:
		app.noResults("no markdown file found to bootstrap from (kk finddocs --help says which files count)")
	}
	for _, d := range docs {
		if d.SHA256 != "" {
			fmt.Fprintf(app.IO.Out, "+ %s\t%s\n", d.Path, d.SHA256)
		} else {
			fmt.Fprintf(app.IO.Out, "+ %s\n", d.Path)
		}
	}
	return nil
}

// runMemoryFiles lists the memory files of the installed harnesses (all
// of them when none is installed).
func runMemoryFiles(app *App, k *store.KB) error {
	reg := app.harnesses()
	var adapters []harness.Adapter
	if inst, err := k.ReadInstalled(); err == nil {
		for _, id := range inst.Harnesses {
			if a, err := reg.Get(id); err == nil {
				adapters = append(adapters, a)
			}
		}
	}
	if len(adapters) == 0 {
		for _, id := range reg.IDs() {
			a, _ := reg.Get(id)
			adapters = append(adapters, a)
		}
	}
	files := harness.FindMemoryFiles(adapters, k.Root, app.Getenv("HOME"))
	if app.JSON {
		return app.printJSON(struct {
			Memory []harness.MemoryFile `json:"memory"`
		}{files})
	}
	for _, f := range files {
		fmt.Fprintf(app.IO.Out, "+ %s\t%s\n", f.Path, strings.Join(f.Harnesses, ","))
	}
	return nil
}
