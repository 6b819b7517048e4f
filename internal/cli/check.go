package cli

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/trace"
	"github.com/spf13/cobra"
)

type checkOpts struct {
	p     trace.KBCheckParams
	input string
}

func newCheckCmd(app *App) *cobra.Command {
	var o checkOpts
	var rules []string
	for _, r := range trace.CheckRules {
		rules = append(rules, "  "+r.Name+"\n      "+r.Description)
	}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the traceability rules; exit 1 on a violation (for CI)",
		Long: `The command-line face of kb_check. It syncs the current branch's index, runs
the rules (all of them, or those named with --rule) and prints each
violation as "rule<TAB>ids<TAB>message". It exits 0 when there is none and
1 when there is any, so CI can run it next to kk validate. --json prints
the result envelope {"success":true,"data":{"rules":[…],"violations":[{rule,
ids, message}],"stray_files":[…]}}. A file under nodes/ whose name does
not end in .md (a note saved as note.txt) is read by no rule: it is not a
violation, but a warning on stderr names it, or with --json stray_files
lists it (its path from the repository's root; kk lint: stray-file).

Rules:
` + strings.Join(rules, "\n"),
		Example: `  kk check
  kk check --rule must-coverage --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usagef("check takes flags, not arguments (got %q)", args[0])
			}
			if o.input != "" {
				return refuseWithInput(app, cmd, "rule")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			app.skipsReported = true // leaves-readable reports them
			// The rules judged from part of the leaves would be wrong
			// (an edge to a note not checked out is not dangling).
			var stray []string
			if k, err := app.KB(); err == nil {
				if err := index.CheckedOut(ctx, k); err != nil {
					return err
				}
				stray = checks.StrayFiles(k)
			}
			resp, err := opCall(ctx, app, o.input, "", nil, "kb-check", o.p, trace.KBCheck)
			if err != nil {
				return err
			}
			var found int
			nodes := store.DirName + "/nodes/"
			if r, ok := resp.Data.(*trace.CheckResult); ok && resp.Success {
				found = len(r.Violations)
				if !app.JSON {
					for _, v := range r.Violations {
						fmt.Fprintf(app.IO.Out, "%s\t%s\t%s\n", v.Rule, strings.Join(v.IDs, ","), v.Message)
					}
				} else if len(stray) > 0 {
					out := checkOutput{CheckResult: r}
					for _, f := range stray {
						out.StrayFiles = append(out.StrayFiles, nodes+f)
					}
					resp.Data = out
				}
			}
			if err := printGraph(app, resp, func(w io.Writer, data any) {}); err != nil {
				return err
			}
			if len(stray) > 0 && !app.JSON {
				// Not a violation (the file may be there on purpose), but
				// a note saved with the wrong extension is left out of
				// every rule without a word otherwise.
				lines := make([]string, len(stray))
				for i, f := range stray {
					lines[i] = nodes + f
					if of, mark, ok := store.MergeToolLeftover(path.Base(f)); ok && mark == "orig" {
						// Not a note to rename: git mergetool's backup.
						lines[i] += fmt.Sprintf(" (the backup git mergetool keeps of %s: remove it)", nodes+path.Join(path.Dir(f), of))
					}
				}
				app.warnf("%d file(s) under %s are not notes, and kk leaves them out of everything (kk reads only files named *.md); rename a note to <name>.md (git mv when it is committed), move any other file out of %s or remove it:\n  %s",
					len(stray), nodes, nodes, strings.Join(lines, "\n  "))
			}
			if found > 0 {
				// With --json the result on stdout says it all: stderr
				// stays empty, as for kk lint and kk index rebuild --check.
				if !app.JSON {
					fmt.Fprintf(app.IO.Err, "kk: %d violation(s) of the traceability rules\n", found)
				}
				return &SilentError{Code: ExitFailure}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&o.p.Rules, "rule", nil, "run only this rule (repeatable)")
	cmd.Flags().StringVar(&o.input, "input", "", "read the kb_check parameter object from a file, or - for standard input")
	return cmd
}

// checkOutput is kk check's --json data: kb_check's result, and the files
// under nodes/ that are not notes (paths from the repository's root),
// which no rule reads.
type checkOutput struct {
	*trace.CheckResult
	StrayFiles []string `json:"stray_files,omitempty"`
}
