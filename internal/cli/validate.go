package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/schema"
)

type validateOpts struct {
	name string
	file string // "-" for standard input
}

func newValidateCmd(app *App) *cobra.Command {
	var o validateOpts
	return &cobra.Command{
		Use: "validate <name> [file|-]",
		Example: `  kk validate node-input node.json
  kk validate node .ai/kenkeep/nodes/practice-wrap-errors.md
  cat plan.json | kk validate rebalance-plan -`,
		Short: "Check a JSON, YAML or markdown document against a kk schema",
		Long: `Check a document against the named schema (see kk schema --list). The
document comes from the file, or from standard input when the file is - or
left out.

The document is read as JSON first, then as YAML. A markdown file whose
first line is --- is checked by its front matter, so
kk validate node .ai/kenkeep/nodes/practice-x.md checks a leaf. YAML dates
stay the text they were written as.

A valid document prints "<name>: valid". Otherwise kk exits 1 and lists
every failure as "<json-pointer>: <message>", sorted by pointer (the
whole document is "(root)"); with
--json the result is {"schema_version", "valid", "schema", "file",
"errors": [{"pointer", "message"}]} on standard output.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usagef("validate needs a schema name and at most one file (got %d argument(s)); see kk schema --list", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name, o.file = args[0], "-"
			if len(args) == 2 {
				o.file = args[1]
			}
			return runValidate(cmd.Context(), app, o)
		},
	}
}

type validateResult struct {
	Valid  bool             `json:"valid"`
	Schema string           `json:"schema"`
	File   string           `json:"file"`
	Errors []schema.Failure `json:"errors"`
}

func runValidate(_ context.Context, app *App, o validateOpts) error {
	// An unknown name fails before any input is read.
	if _, err := schema.Lookup(o.name); err != nil {
		return err
	}
	if o.file == "-" && app.IO.InTTY {
		return usagef("validate reads the document from standard input: pipe it in or name a file")
	}
	// A symbol manifest may be larger than a parameter object.
	data, name, err := app.readLimited(o.file, "the document", maxDocumentBytes)
	if err != nil {
		return err
	}
	doc, err := schema.ParseDocument(data)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	res := validateResult{Valid: true, Schema: o.name, File: name, Errors: []schema.Failure{}}
	verr := schema.Validate(o.name, doc)
	var ve *schema.ValidationError
	switch {
	case verr == nil:
	case errors.As(verr, &ve):
		res.Valid, res.Errors = false, ve.Failures
	default:
		return fmt.Errorf("%s: %w", name, verr)
	}
	if app.JSON {
		if err := app.printJSON(res); err != nil {
			return err
		}
		if !res.Valid {
			return &SilentError{Code: ExitFailure}
		}
		return nil
	}
	if !res.Valid {
		return fmt.Errorf("%s: %w", name, verr)
	}
	fmt.Fprintf(app.IO.Out, "%s: valid\n", o.name)
	return nil
}
