package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/reorg"
)

type nodeRenameOpts struct {
	id    string
	newID string
}

func newNodeRenameCmd(app *App) *cobra.Command {
	var o nodeRenameOpts
	cmd := &cobra.Command{
		Use:   "rename <id> <new-id>",
		Short: "Give a note a new id, and point the edges and links to it there",
		Long: `Give the note <id> (a practice, a map or another type kk node write writes)
the id <new-id>, in one change: the leaf gets kk_id <new-id> and its
kk_version bumped, and its file is renamed <new-id>.md in the same folder
(git sees a rename). Every other leaf's kk_relates_to, kk_depends_on and
kk_edges name <new-id> instead (their Related blocks rendered again, their
versions bumped); links typed in other notes' bodies to the old file are
pointed at the new one, in the form they had (relative or /-absolute, their
text and #fragment kept). The old id is retired to <new-id> in
nodes/.redirects.json, so an agent, a session or a reference elsewhere that
holds it still finds the note, and the ledger's entries that led to the old
id lead to <new-id>. The index files are brought up to date: kk check finds
no edge to the old id. <id> is matched without regard to case.

A person who changed kk_id by hand in the file named for <id> (which
leaves the file misnamed and the edges to <id> dangling: kk lint and kk
check say so) finishes the rename with the same command: the leaf is taken
as the file holds it and renamed <new-id>.md, and the rest is as above. A
file renamed to <new-id>.md by hand (git mv) with its kk_id left is changed
in place.

A person who did both (renamed the file with git mv and changed kk_id to
<new-id>) leaves no file that names <id>: when no leaf holds <id>, the
ledger has not retired it and a leaf holds <new-id>, the same command
points the references to <id> at that leaf (the edges, the links typed to
a file <id>.md that is not there, from any folder to any folder, the
ledger's entries) and retires <id> to
<new-id>, leaving the leaf as it is (but for links its own body types to
its old file); it prints "references" instead of "renamed" (--json:
references_only). It is refused when <id> is no id of the leaf's type, or
when nothing names <id>.

A <new-id> that differs from <id> only in case (practice-Retry to
practice-retry) fixes the spelling of the same id: the leaf, its file name
and the edges, links and ledger entries that spell it change, and the old
spelling is not retired (it is the same id). On a file system that does
not tell names apart by case (macOS, Windows), rename the file first
(git mv -f), then run the command, which changes the leaf in place. A
<new-id> spelled as the id the note has is refused, unless its file is
named otherwise (kk_id's case fixed by hand, say): the file is renamed
<new-id>.md, and the edges and links that spell the id otherwise follow.

<new-id> follows kk node write's rule for the note's type: a practice's id
is practice-<slug>, a map's map-<slug>, the slug in lowercase ASCII words
joined by -. A <new-id> another leaf has, or one the ledger retired, is
refused, as are an <id> that is no note (unknown, or retired to another),
traceability entities (kept by kk upsert and kk delete), and atoms and
molecules (kk graph); nothing is written then.

Prints one line per change: "renamed" (old id, new id, old path → new
path) or "references" (old id, new id, the leaf's path, and what was
done), "relinked" (an edge pointed at the new id), "unlinked" (an edge
dropped because its list names the new id already), "link" (a typed link
pointed at the new file, as file:line old → new) and "redirected" (the old
id, and each retired id whose entry led to it, now leading to the new id;
no line for the old id of a case-only rename); --json prints the same.`,
		Example: `  kk node rename practice-retyr-policy practice-retry-policy
  kk node rename map-legacy-api map-v1-api --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("node rename needs the id of a note and its new id (kk node rename <id> <new-id>); got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.id, o.newID = args[0], args[1]
			return runNodeRename(cmd.Context(), app, o)
		},
	}
	return cmd
}

func runNodeRename(ctx context.Context, app *App, o nodeRenameOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	res, err := reorg.RenameNote(ctx, k, o.id, o.newID, reorg.RenameOptions{Command: app.Command})
	if r, ok := errors.AsType[*reorg.RenameRefusal](err); ok {
		if r.NewID {
			return fmt.Errorf("<new-id> %s: %s", r.Arg, r.Reason)
		}
		return fmt.Errorf("<id> %s: %s", r.Arg, r.Reason)
	}
	if err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(res)
	}
	w := app.IO.Out
	if res.ReferencesOnly {
		fmt.Fprintf(w, "references\t%s\t%s\t%s\tno leaf holds %s: the leaf that holds %s is left as it is, and the references to %s name %s now\n",
			res.ID, res.NewID, res.NewPath, res.ID, res.NewID, res.ID, res.NewID)
	} else {
		fmt.Fprintf(w, "renamed\t%s\t%s\t%s → %s\n", res.ID, res.NewID, res.Path, res.NewPath)
	}
	for _, e := range res.Edges {
		if e.To != "" {
			fmt.Fprintf(w, "relinked\t%s\t%s → %s\n", e.ID, e.Key, e.To)
		} else {
			fmt.Fprintf(w, "unlinked\t%s\t%s (%s)\n", e.ID, e.Key, e.Why)
		}
	}
	for _, l := range res.Links {
		fmt.Fprintf(w, "link\t%s:%d\t%s → %s\n", l.File, l.Line, l.Target, l.NewTarget)
	}
	if !res.CaseOnly {
		fmt.Fprintf(w, "redirected\t%s\t%s\n", res.ID, res.NewID)
	}
	for _, id := range res.Redirects {
		fmt.Fprintf(w, "redirected\t%s\t%s\n", id, res.NewID)
	}
	return nil
}
