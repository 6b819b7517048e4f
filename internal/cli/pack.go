package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/pack"
	"github.com/kk-project/kk/internal/schema"
)

func newPackCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pack",
		Short: "Export the knowledge tree as a knowledge pack, or import one",
		Long: `A knowledge pack is a folder, or a .tar.gz of one, that carries reviewed
knowledge from one repository to another:

  kenkeep-pack.yaml              manifest: name, version, schema_version, summary, homepage
  knowledge/                     the leaves, in their folders, with generated index.md files
  knowledge.FOLDER_SUMMARIES.md  the one-line summary of each folder
  README.md                      for people

'kk pack export' writes one from this repository's tree; 'kk pack import'
grafts one into nodes/<name>/. Packs written by kenkeep read the same way.`,
	}
	cmd.AddCommand(newPackExportCmd(app), newPackImportCmd(app))
	return cmd
}

type packExportOpts struct {
	Name     string
	Version  string
	Summary  string
	Homepage string
	Out      string
	verbose  bool
}

func newPackExportCmd(app *App) *cobra.Command {
	var o packExportOpts
	cmd := &cobra.Command{
		Use:     "export --name <name> --pack-version <version> --description <text> [--homepage <url>] [--output <dir|file.tar.gz>]",
		Example: `  kk pack export --name team-go --pack-version 1.0.0 --description "Our Go conventions" --output team-go.tar.gz`,
		Short:   "Write the knowledge tree as a knowledge pack",
		Long: `Write every leaf of the tree as a knowledge pack: the leaves byte for byte
under knowledge/ (with freshly generated index.md files, and
nodes/.redirects.json when there is one), the summaries of the exported
folders in knowledge.FOLDER_SUMMARIES.md, the manifest kenkeep-pack.yaml
(schema_version 3) and a README.md.

--output names a folder, or a file ending in .tar.gz (or .tgz) for an archive
whose entries sit under kenkeep-pack-<name>/. The default is the folder
dist in the working directory, as in kenkeep. An existing folder is
replaced only if it is a pack (it holds kenkeep-pack.yaml) or empty; in a
pack folder, other files such as LICENSE or .git are kept.

The pack is put together and linted beside --output first; any lint error
aborts the export and leaves --output as it was. Exporting the same tree
twice gives the same bytes, archives included (sorted entries, one fixed
time stamp, no owner).

With --json: {"schema_version", "name", "version", "out", "format" (dir or
tar.gz), "leaves", "folders", "folder_summaries", "missing_summaries",
"redirects"}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var missing []string
			for _, f := range []struct{ flag, val string }{{"--name", o.Name}, {"--pack-version", o.Version}, {"--description", o.Summary}} {
				if strings.TrimSpace(f.val) == "" {
					missing = append(missing, f.flag)
				}
			}
			if len(missing) > 0 {
				return usagef("pack export needs %s", strings.Join(missing, ", "))
			}
			return runPackExport(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.Name, "name", "", "pack name: lowercase letters, digits and - (required)")
	cmd.Flags().StringVar(&o.Version, "pack-version", "", "version of the pack's content, such as 1.0.0 (required)")
	cmd.Flags().StringVar(&o.Summary, "description", "", "one-line description of the pack (required; the manifest's summary)")
	cmd.Flags().StringVar(&o.Homepage, "homepage", "", "where the pack is published (an absolute URL)")
	cmd.Flags().StringVar(&o.Out, "output", "", "folder, or file ending in .tar.gz, to write (default dist)")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "name every folder the pack lacks a summary for, not only the first 5")
	return cmd
}

func runPackExport(ctx context.Context, app *App, o packExportOpts) error {
	m := contracts.PackManifest{Name: o.Name, Version: o.Version, Summary: o.Summary, Homepage: o.Homepage, SchemaVersion: pack.SchemaVersion}
	if err := manifestFlagsError(pack.ValidateManifest(m)); err != nil {
		return err
	}
	k, err := app.KB()
	if err != nil {
		return err
	}
	out := o.Out
	if out == "" {
		out = "dist" // kenkeep's default; a folder that is not a pack nor empty is refused
	}
	if !filepath.IsAbs(out) {
		wd, err := app.Getwd()
		if err != nil {
			return err
		}
		out = filepath.Join(wd, out)
	}
	res, err := pack.Export(ctx, k, pack.ExportOptions{Manifest: m, Out: out})
	if err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(res)
	}
	fmt.Fprintf(app.IO.Out, "exported\t%d leaf file(s) in %d folder(s) as pack %s %s\n", res.Leaves, res.Folders, res.Name, res.Version)
	fmt.Fprintf(app.IO.Out, "wrote\t%s\n", res.Out)
	if len(res.MissingSummaries) > 0 {
		folders := listSome(res.MissingSummaries)
		if o.verbose {
			folders = strings.Join(res.MissingSummaries, ", ")
		} else if len(res.MissingSummaries) > 5 {
			folders += " (--verbose lists them all)"
		}
		app.warnf("%d folder(s) of the pack have no summary: %s; add them to FOLDER_SUMMARIES.md so the pack's index says what each folder is for",
			len(res.MissingSummaries), folders)
	}
	return nil
}

// manifestFlagsError turns a manifest built from flags that does not
// match its schema into a usage error naming the flags.
func manifestFlagsError(err error) error {
	if err == nil {
		return nil
	}
	if te := (*pack.TextError)(nil); errors.As(err, &te) {
		return fmt.Errorf("--%s: %s", packManifestFlags[te.Key], te.Msg)
	}
	var ve *schema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	msgs := make([]string, 0, len(ve.Failures))
	for _, f := range ve.Failures {
		key := strings.TrimPrefix(f.Pointer, "/")
		msgs = append(msgs, "--"+cmp.Or(packManifestFlags[key], key)+": "+f.Message)
	}
	return usagef("invalid pack manifest: %s", strings.Join(msgs, "; "))
}

type packImportOpts struct {
	Source  string
	As      string
	Migrate bool
}

func newPackImportCmd(app *App) *cobra.Command {
	var o packImportOpts
	cmd := &cobra.Command{
		Use: "import <dir|file.tar.gz> [--as <name>] [--migrate]",
		Example: `  kk pack import team-go.tar.gz
  kk pack import kenkeep-pack-drupal --as drupal --migrate`,
		Short: "Graft a knowledge pack into the tree",
		Long: `Import a knowledge pack from a folder or a .tar.gz archive. The manifest
kenkeep-pack.yaml may sit at the top of the source or in the one folder
directly inside it (as in a release archive).

Every leaf of the pack's knowledge/ folder lands under nodes/<name>/ (the
manifest's name, or --as), keeping its subfolder; the folder must not
exist yet, and appears whole. Generated index.md files, .redirects.json
and other files of the pack are not copied: the index is regenerated
afterwards. A leaf whose id the tree already has, or has retired in
nodes/.redirects.json, is skipped with a warning. The pack's folder
summaries are recorded under nodes/<name>/, and the manifest's summary
becomes the summary of nodes/<name>/ itself. Related links are rendered
for the leaves' new place, and leaves of the tree that named an incoming
id get working links.

A pack at schema_version 2 (written by kenkeep before its OKF format)
needs --migrate, which converts its leaves as 'kk migrate okf-v3' does,
old index.md summaries included.

Archives are read by kk itself. Entries that climb out with "..", absolute
paths, links, devices, files over 1 MiB (.md) or 16 MiB (others), more
than 256 MiB in all or more than 50000 entries are refused. The source is
unpacked and checked under .ai/kenkeep/.state/, and every leaf is read and
validated before the tree is touched; bad input changes nothing. kk does
not download packs: for a pack published on GitHub, download its archive
and import the file.

With --json: {"schema_version", "name", "version", "folder", "migrated",
"imported", "skipped": [{"id", "path", "reason" (exists or retired),
"existing"}], "relinked", "folder_summaries", "unknown_edges",
"collisions", "index_changed", "missing_summaries", "renamed": [{"from",
"to"}]}. A folder of the pack whose name kk does not make (one holding a
space, a Windows device name such as con, one ending with a dot) becomes
the nearest name it does (Meeting-Notes, con-notes), with its summary,
and is listed in "renamed".`,
		Args: oneArg("pack import needs the pack: a folder or a .tar.gz file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Source = args[0]
			if o.As != "" && !pack.ValidName(o.As) {
				return usagef("--as %q: use lowercase letters, digits and -, starting with a letter or digit", o.As)
			}
			return runPackImport(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.As, "as", "", "folder under nodes/ to import into (default: the pack's name)")
	cmd.Flags().BoolVar(&o.Migrate, "migrate", false, "convert a schema_version 2 pack to version 3 while importing")
	return cmd
}

func runPackImport(ctx context.Context, app *App, o packImportOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	wd, err := app.Getwd()
	if err != nil {
		return err
	}
	res, err := pack.Import(ctx, k, pack.ImportOptions{Source: o.Source, Dir: wd, As: o.As, Migrate: o.Migrate, Command: app.Command})
	if err != nil {
		return err
	}
	for _, s := range res.Skipped {
		if s.Reason == "retired" {
			app.warnf("skipped %s: its id %s was retired in this tree (%s), where edges to it lead to its successors", s.Path, s.ID, s.Existing)
			continue
		}
		app.warnf("skipped %s: the tree already has a leaf with id %s (%s)", s.Path, s.ID, s.Existing)
	}
	if len(res.UnknownEdges) > 0 {
		app.warnf("imported leaves link to %d id(s) that are in neither the pack nor the tree: %s", len(res.UnknownEdges), strings.Join(res.UnknownEdges, ", "))
	}
	if len(res.MissingSummaries) > 0 {
		app.warnf("%d folder(s) of the pack have no summary in its %s: %s", len(res.MissingSummaries), pack.SummariesFile, listSome(res.MissingSummaries))
	}
	for _, r := range res.Renamed {
		app.notef("the pack's folder %q is %s/%s: kk makes no folder named so (a space, a Windows device name or a trailing dot)", r.From, res.Folder, r.To)
	}
	app.phrasingsHint(ctx, k)
	if app.JSON {
		return app.printJSON(res)
	}
	how := ""
	if res.Migrated {
		how = " (converted from schema version 2)"
	}
	fmt.Fprintf(app.IO.Out, "imported\t%d leaf file(s) of pack %s %s into %s%s\n", res.Imported, res.Name, res.Version, res.Folder, how)
	fmt.Fprintf(app.IO.Out, "skipped\t%d leaf file(s) whose id the tree already has\n", len(res.Skipped))
	fmt.Fprintf(app.IO.Out, "summaries\t%d folder summary(ies) recorded\n", res.FolderSummaries)
	for _, p := range res.Relinked {
		fmt.Fprintf(app.IO.Out, "relinked\t%s\n", p)
	}
	for _, c := range res.Collisions {
		fmt.Fprintf(app.IO.Out, "collision\t%s\t%s\n", c.Path, strings.Join(c.Headings, ", "))
	}
	fmt.Fprintf(app.IO.Out, "index\t%d file(s) regenerated\n", len(res.IndexChanged))
	return nil
}

// packManifestFlags names the flag of kk pack export that sets each
// manifest key.
var packManifestFlags = map[string]string{"name": "name", "version": "pack-version", "summary": "description", "homepage": "homepage"}
