package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/reorg"
)

type nodeDeleteOpts struct {
	ids        []string
	redirectTo string
}

func newNodeDeleteCmd(app *App) *cobra.Command {
	var o nodeDeleteOpts
	cmd := &cobra.Command{
		Use:   "delete <id>...",
		Short: "Delete notes, and the edges other notes have to them",
		Long: `Delete the leaves <id>... (notes: practice, map and the other types kk node
write writes) and, in the same change, take their ids out of every other
leaf's kk_relates_to and kk_depends_on (and kk_edges). Those leaves get their
Related block rendered again and their kk_version bumped, as any write does,
and the index files are brought up to date: kk check finds no edge to a
deleted note. Ids are matched without regard to case.

--redirect-to <id> retires the deleted ids to that note in
nodes/.redirects.json (the ledger kk rebalance's split-leaf keeps), and the
edges to them name it instead (once per list; the note's own edge to a
deleted one is dropped, and so is a depends_on edge, in kk_depends_on or
kk_edges, that would close a dependency cycle, saying why). An edge that names an old id later (one typed from
memory, or merged from another branch) leads to the replacement through the
ledger. Entries of the ledger that led to a deleted note (ids retired to
it earlier) lead to the replacement instead; one that named the
replacement already no longer names the deleted note, and the
replacement's own entry, which would lead to itself, is removed.

Without --redirect-to the deleted note is taken out of the entries that
led to it: an entry left with no successor is removed (its retired id
leads nowhere now, like the deleted note's, and edges naming it are
dropped with the others), and so is an entry that led only through it.

Links typed in other notes' bodies to a deleted note: with --redirect-to
each is pointed at the replacement's file in the same change, in the form
it had (relative or /-absolute, its text and #fragment kept), and printed as
"link <file>:<line> <old> → <new>"; without it each is left as written and
named in a warning (file:line), and kk check reports it until it is pointed
elsewhere or removed. A note kk cannot read (its YAML broken by hand) is not
rewritten: without --redirect-to, one that names a deleted note is named in
a warning (--json: unreadable), as its edge will dangle once it is mended.

Traceability entities (req, scenario, test, adr, flag, event, symbol) are
deleted with kk delete, atoms and molecules with kk graph delete. An id that
is no note (unknown, or already retired to another), an id named twice, or a
--redirect-to that is no note or is being deleted is refused and nothing is
written. A note whose file a person removed (rm or git rm; or git rm
committed, while edges still name it) is deleted all the same: kk
finishes the deletion from the copy git has, and the edges to it go as
above. Run again when nothing is left to change (no edge, link, ledger
entry or generated file), it is refused as already deleted, writing
nothing; commit the removal.
Prints one line per change: "deleted", "redirected", "repointed" (a
ledger entry pointed at the replacement), "unredirected" (a deleted note
taken out of a ledger entry), "unlinked" (an edge dropped), "relinked"
(an edge pointed at the replacement) or "link" (a typed link pointed at
it); --json prints the same.`,
		Example: `  kk node delete practice-old-retry-policy
  kk node delete practice-retry-v1 practice-retry-v2 --redirect-to practice-retry-policy
  kk node delete map-legacy-api --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("node delete needs the id of at least one note")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ids = args
			return runNodeDelete(cmd.Context(), app, o, app.flagName(cmd.Flags(), "redirect-to"))
		},
	}
	cmd.Flags().StringVar(&o.redirectTo, "redirect-to", "", "retire the deleted ids to this note (nodes/.redirects.json) and point the edges to them at it")
	return cmd
}

func runNodeDelete(ctx context.Context, app *App, o nodeDeleteOpts, redirectFlag string) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	res, err := reorg.DeleteNotes(ctx, k, o.ids, reorg.DeleteOptions{RedirectTo: o.redirectTo, Command: app.Command})
	if r, ok := errors.AsType[*reorg.DeleteRefusal](err); ok {
		if r.Replacement {
			return fmt.Errorf("%s %s: %s", redirectFlag, r.Arg, r.Reason)
		}
		return fmt.Errorf("<id> %s: %s", r.Arg, r.Reason)
	}
	if err != nil {
		return err
	}
	for _, l := range res.Links {
		if l.NewTarget == "" {
			app.warnf("%s:%d links to %s, a deleted note: point the link elsewhere or remove it", l.File, l.Line, l.Target)
		}
	}
	for _, u := range res.Unreadable {
		app.warnf("%s, which kk cannot read, names %s, a deleted note: kk left the file as written; mend it (kk lint lists its problems), then remove that edge (kk check names it)", u.File, u.ID)
	}
	if app.JSON {
		return app.printJSON(res)
	}
	w := app.IO.Out
	for _, d := range res.Deleted {
		fmt.Fprintf(w, "deleted\t%s\t%s\n", d.ID, d.Path)
		if res.RedirectedTo != "" {
			fmt.Fprintf(w, "redirected\t%s\t%s\n", d.ID, res.RedirectedTo)
		}
	}
	for _, c := range res.Redirects {
		if c.To != "" {
			fmt.Fprintf(w, "repointed\t%s\t%s → %s\n", c.ID, c.Removed, c.To)
			continue
		}
		why := c.Why
		if c.EntryRemoved {
			why += "; its entry is removed"
		}
		fmt.Fprintf(w, "unredirected\t%s\t%s (%s)\n", c.ID, c.Removed, why)
	}
	for _, e := range res.Edges {
		if e.To != "" {
			fmt.Fprintf(w, "relinked\t%s\t%s → %s\n", e.ID, e.Key, e.To)
		} else if e.Why != "" {
			fmt.Fprintf(w, "unlinked\t%s\t%s (%s)\n", e.ID, e.Key, e.Why)
		} else {
			fmt.Fprintf(w, "unlinked\t%s\t%s\n", e.ID, e.Key)
		}
	}
	for _, l := range res.Links {
		if l.NewTarget != "" {
			fmt.Fprintf(w, "link\t%s:%d\t%s → %s\n", l.File, l.Line, l.Target, l.NewTarget)
		}
	}
	return nil
}
