package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagAliases are the old names of flags that now carry the one name their
// concept has across kk, by command: the text of a description is
// --description, a body read from a file --body-file (and its text
// --body), tags --tag, the version a change expects --expect-version
// (--version is kk's own), a file to write --output, entity types --type.
// An old name still works, as a hidden alias: pflag reads it as the new
// one, so help, completion and the reference show only the new name.
var flagAliases = map[string]map[string]string{
	"kk node write":   {"summary": "description", "tags": "tag", "from": "body-file"},
	"kk graph create": {"knowledge-file": "body-file"},
	"kk graph update": {"knowledge-file": "body-file", "version": "expect-version"},
	"kk graph delete": {"version": "expect-version"},
	"kk upsert":       {"version": "expect-version"},
	"kk delete":       {"version": "expect-version"},
	"kk pack export":  {"version": "pack-version", "summary": "description", "out": "output"},
	"kk client post":  {"content": "body", "file": "body-file", "tags": "tag"},
	"kk client edit":  {"content": "body", "file": "body-file", "tags": "tag"},
	"kk graph export": {"types": "type"},
}

// applyFlagAliases installs flagAliases on the command tree.
func applyFlagAliases(root *cobra.Command) {
	walkTree(root, func(c *cobra.Command) {
		aliases, ok := flagAliases[c.CommandPath()]
		if !ok {
			return
		}
		c.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
			if n, ok := aliases[name]; ok {
				return pflag.NormalizedName(n)
			}
			return pflag.NormalizedName(name)
		})
	})
}

// walkTree calls fn on c and every command below it.
func walkTree(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, s := range c.Commands() {
		walkTree(s, fn)
	}
}
