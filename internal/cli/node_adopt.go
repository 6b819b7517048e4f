package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/search"
	"github.com/kk-project/kk/internal/store"
)

type nodeAdoptOpts struct {
	paths   []string
	noIndex bool
}

func newNodeAdoptCmd(app *App) *cobra.Command {
	var o nodeAdoptOpts
	cmd := &cobra.Command{
		Use:   "adopt [PATH...]",
		Short: "Make notes written by hand, and copied notes, under nodes/ valid leaves",
		Long: `Turn markdown files under nodes/ that are not valid leaves yet (notes
written by hand) into leaves, keeping their body and every front matter key
they have, and print what was filled in. A note needs at least a title: a
title: key in its front matter, or a first "# " heading.

What a note does not say is filled in: type practice; title from the first
heading; description from a summary: key, else the body's first sentence;
tags, kk_derived_from, kk_relates_to and kk_depends_on empty (a list written
as one comma-separated string is split); kk_schema_version 3; kk_id from the
file name when it already is <type>-<slug>, else from the type and title as
kk node write derives it (-2 … -4 when taken), and the file is renamed
<kk_id>.md in its folder; kk_confidence high.

A note copied from another to start a new one (cp practice-retry.md
practice-timeout.md) keeps the other's kk_id, and kk skips it. When the
file that holds the id is named for it (<kk_id>.md: the original), adopt
gives the copy an id of its own: the copy's file name when it already is
<type>-<slug> and no other leaf has that id, else from its type and title
(-2 … -4 when taken), the file renamed <kk_id>.md. The copy keeps its body
and every other key; its kk_version starts again at 1 (a copy is a new
note). The original is never changed, even when named. When no one file
sharing the id is named for it, kk cannot tell which is the copy: adopt
without PATH leaves them and says so; name the copy as a PATH to adopt it.

A value that is there but wrong (an unknown confidence, say), front matter
that does not parse, git conflict markers and kenkeep v1/v2 leaves are not
guessed at: the file is named with its problem and left alone.

With PATH arguments (relative to the working directory, or as
.ai/kenkeep/nodes/…), each one must be adoptable, or nothing is written.
Without, every file kk skips is tried; those that cannot be adopted are
listed, and the command exits 1. Everything adopted is one change, written
through kk's one transaction, and the index files are brought up to date
(unless --no-index). kk doctor --fix runs this too. Each key set is
printed: "filled" for a key the note lacked, "set" for one it had (a copy's
kk_id), with where the value came from.`,
		Example: `  kk node adopt
  kk node adopt .ai/kenkeep/nodes/go/ctx.md
  kk node adopt .ai/kenkeep/nodes/practice/practice-timeout.md   # a copy`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.paths = args
			return runNodeAdopt(cmd.Context(), app, o)
		},
	}
	cmd.Flags().BoolVar(&o.noIndex, "no-index", false, "leave the generated index files alone")
	return cmd
}

func runNodeAdopt(ctx context.Context, app *App, o nodeAdoptOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	var rels []string
	for _, p := range o.paths {
		arg := p
		if abs, err := app.absPath(p); err == nil {
			if _, err := os.Lstat(abs); err == nil {
				arg = abs
			}
		}
		rel, perr := search.LeafPath(k, arg)
		if perr != nil {
			return usagef("%s: %s", p, perr.Message)
		}
		rels = append(rels, rel)
	}
	app.skipsReported = true // what cannot be adopted is listed, with why
	res, err := curate.Adopt(ctx, k, rels, curate.WriteOptions{Source: "cli", Command: app.Command, NoIndex: o.noIndex})
	if err != nil {
		return err
	}
	if app.JSON {
		if err := app.printJSON(res); err != nil {
			return err
		}
	} else {
		printAdopted(app, res)
	}
	if len(res.Left) > 0 {
		return &SilentError{Code: ExitFailure}
	}
	return nil
}

func printAdopted(app *App, res *curate.AdoptResult) {
	w := app.IO.Out
	for _, a := range res.Adopted {
		if a.From != a.Path {
			fmt.Fprintf(w, "adopted\t%s\t%s (renamed %s)\n", a.ID, a.From, a.Path)
		} else {
			fmt.Fprintf(w, "adopted\t%s\t%s\n", a.ID, a.Path)
		}
		for _, f := range a.Filled {
			verb := "filled"
			if f.Was != nil { // a key the note had, changed (a copy's kk_id)
				verb = "set"
			}
			fmt.Fprintf(w, "\t%s %s: %s (%s)\n", verb, f.Field, filledValue(f.Value), f.From)
		}
	}
	for _, l := range res.Left {
		fmt.Fprintf(w, "not adopted\t%s\t%s\n", l.Path, l.Reason)
	}
	switch {
	case len(res.Adopted) == 0 && len(res.Left) == 0:
		app.notef("nothing to adopt: kk reads every leaf")
	case len(res.Left) > 0:
		fmt.Fprintf(app.IO.Err, "kk: %d file(s) could not be adopted; fix them by hand (`kk lint` lists their problems)\n", len(res.Left))
	default:
		app.notef("adopted %d note(s); review them with git diff", len(res.Adopted))
	}
}

// filledValue shows a filled value as it reads in YAML flow style.
func filledValue(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// adoptAll is kk doctor --fix's adoption: every file kk skips that can be
// adopted is; the others stay for the checks to report.
func adoptAll(ctx context.Context, app *App, k *store.KB) error {
	res, err := curate.Adopt(ctx, k, nil, curate.WriteOptions{Source: "cli", Command: app.Command})
	var ae *curate.AdoptError
	if errors.As(err, &ae) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, a := range res.Adopted {
		app.notef("fixed: adopted %s as the leaf %s (%d key(s) filled in)", a.From, a.ID, len(a.Filled))
	}
	return nil
}
