package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/schema"
)

type schemaOpts struct {
	name string
	list bool
}

func newSchemaCmd(app *App) *cobra.Command {
	var o schemaOpts
	cmd := &cobra.Command{
		Use: "schema <name> | --list",
		Example: `  kk schema --list
  kk schema node-input`,
		Short: "Print the JSON Schema of a kk input",
		Long: `Print the JSON Schema (draft 2020-12) of one structured input kk accepts:
leaf front matter, config.yaml, the JSON plans that kk primitives take.
--list names them all with a one-line description.

The schemas are generated from kk's own types; schemas/<name>.json in kk's
repository holds the same bytes. Check a document against one with
kk validate <name> [file].

With --json, the schema is wrapped as {"schema_version", "name", "schema"}.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.list && len(args) > 0:
				return usagef("--list takes no schema name (got %q)", args[0])
			case !o.list && len(args) != 1:
				return usagef("schema needs one schema name, or --list to see them (got %d argument(s))", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.name = args[0]
			}
			return runSchema(cmd.Context(), app, o)
		},
	}
	cmd.Flags().BoolVar(&o.list, "list", false, "list the schema names with a one-line description")
	return cmd
}

type schemaListItem struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

func runSchema(_ context.Context, app *App, o schemaOpts) error {
	if o.list {
		items := []schemaListItem{}
		for _, e := range schema.Entries() {
			items = append(items, schemaListItem{Name: e.Name, Description: e.Description})
		}
		if app.JSON {
			return app.printJSON(map[string]any{"schemas": items})
		}
		for _, it := range items {
			fmt.Fprintf(app.IO.Out, "%s\t%s\n", it.Name, it.Description)
		}
		return nil
	}
	data, err := schema.JSON(o.name)
	if err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		}{o.name, data})
	}
	_, err = app.IO.Out.Write(data)
	return err
}
