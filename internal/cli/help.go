package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// The groups `kk --help` lists its commands in, by task, in this order.
var commandGroups = []*cobra.Group{
	{ID: "knowledge", Title: "Knowledge: create the knowledge base, write and list notes:"},
	{ID: "search", Title: "Search and read:"},
	{ID: "graph", Title: "Graph and traceability (atoms, molecules, requirements, tests…):"},
	{ID: "curation", Title: "Curation: turn sessions and documents into notes, keep the tree in shape:"},
	{ID: "agents", Title: "Agents and hooks:"},
	{ID: "service", Title: "Service: serve the knowledge base over HTTP, browse it:"},
	{ID: "maintenance", Title: "Maintenance and checks:"},
}

// groupOf is the help group of every top-level command. A command missing
// here fails TestHelpGroupsEveryCommand.
var groupOf = map[string]string{
	"init": "knowledge", "node": "knowledge", "index": "knowledge", "schema": "knowledge",
	"validate": "knowledge", "pack": "knowledge", "import": "knowledge",

	"search": "search", "read": "search", "entry": "search",

	"graph": "graph", "context": "graph", "changelog": "graph", "query": "graph",
	"upsert": "graph", "delete": "graph", "check": "graph",

	"curate": "curation", "bootstrap": "curation", "phrasings": "curation",
	"session-log": "curation", "curate-dedup": "curation", "curate-persist": "curation",
	"conflict": "curation", "drafts": "curation", "rebalance": "curation", "place": "curation",
	"finddocs": "curation", "freshness": "curation",

	"mcp": "agents", "uninstall": "agents", "prompt": "agents", "usage": "agents", "hook": "agents",

	"serve": "service", "client": "service", "browse": "service",

	"lint": "maintenance", "doctor": "maintenance", "status": "maintenance", "sync": "maintenance",
	"gc": "maintenance", "compact": "maintenance", "audit": "maintenance", "logs": "maintenance",
	"migrate": "maintenance", "version": "maintenance", "completion": "maintenance",
	"git-merge-redirects": "maintenance", "git-merge-summaries": "maintenance", "git-merge-generated": "maintenance", "git-merge-installed": "maintenance", "git-resolve-versions": "maintenance",
}

// internalCommands are run by kk's own configuration, not by people: they
// work and have their reference pages, but `kk --help` does not list them.
var internalCommands = map[string]bool{
	"hook": true, // the harness hook configurations kk init writes call it
	// git calls it as the merge driver of nodes/.redirects.json
	"git-merge-redirects": true,
	// and of FOLDER_SUMMARIES.md
	"git-merge-summaries": true,
	// and of the generated files (ENTRY.md's summary, a note named index.md)
	"git-merge-generated": true,
	// and of .state/installed-version
	"git-merge-installed": true,
	// kk's post-index-change hook calls it when git stops on conflicts
	"git-resolve-versions": true,
}

// organizeHelp puts the top-level commands into their groups, hides the
// internal ones, and makes every command that only groups others (kk node,
// kk graph …) answer an unknown or missing subcommand with a usage error
// that suggests the nearest name ("kk node lst": did you mean list?).
func organizeHelp(root *cobra.Command) {
	root.AddGroup(commandGroups...)
	root.SetHelpCommandGroupID("maintenance")
	root.SetCompletionCommandGroupID("maintenance")
	for _, c := range root.Commands() {
		c.GroupID = groupOf[c.Name()]
		if internalCommands[c.Name()] {
			c.Hidden = true
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasParent() && c.HasSubCommands() {
			c.SuggestionsMinimumDistance = 2
			c.Args = subcommandArgs
			c.RunE = func(cmd *cobra.Command, args []string) error {
				return usagef("%s needs a subcommand: %s", cmd.Name(), orList(subcommandNames(cmd)))
			}
		}
		if !c.HasSubCommands() && c.Args != nil {
			c.Args = noSuchArgument(c.Args)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// subcommandArgs refuses an argument to a command that only groups others:
// it is a mistyped subcommand, and the error names the nearest ones, as
// cobra does for the root's.
func subcommandArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
	} else {
		msg += "; its subcommands are " + orList(subcommandNames(cmd))
	}
	return usagef("%s", msg)
}

// subcommandNames lists the visible subcommands of cmd.
func subcommandNames(cmd *cobra.Command) []string {
	var names []string
	for _, s := range cmd.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	return names
}

// orList joins names as "a", "a or b", "a, b or c".
func orList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// noSuchArgument wraps the argument check of a command without
// subcommands: where cobra refuses an argument as an "unknown command"
// (cobra.NoArgs), kk says the command takes no arguments, naming the one
// given, and, for a command that reads a file with --input, that the file
// goes there.
func noSuchArgument(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		err := check(cmd, args)
		if err == nil || len(args) == 0 || !strings.HasPrefix(err.Error(), "unknown command ") {
			return err
		}
		if cmd.Flags().Lookup("input") != nil {
			return usagef("%s takes no arguments (got %q); give the file with --input %s", cmd.CommandPath(), args[0], args[0])
		}
		return usagef("%s takes no arguments (got %q)", cmd.CommandPath(), args[0])
	}
}
