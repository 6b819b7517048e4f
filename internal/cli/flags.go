package cli

import (
	"fmt"
	"strings"

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

// refuseRepeatedFlags makes every flag that holds one value (a string, a
// number, a duration) refuse a second, different one: `--title A --title
// B` is a usage error naming the flag and both values, not a silent choice
// of B. The same value twice says one thing (`kk --harness claude doctor
// --harness claude`), and flags that hold a list (--tag, --path) repeat by
// design, as a switch (--json) may. A hidden alias is the same flag to
// pflag, so `--summary a --description b` is refused too. Only the flag
// sets each command defines are visited: asking cobra for a command's
// local or inherited flags would merge them and change its help.
func refuseRepeatedFlags(root *cobra.Command) {
	guard := func(f *pflag.Flag) {
		if _, ok := f.Value.(*onceValue); ok || !singleValued(f) {
			return
		}
		f.Value = &onceValue{Value: f.Value, flag: f}
	}
	walkTree(root, func(c *cobra.Command) {
		c.Flags().VisitAll(guard)
		c.PersistentFlags().VisitAll(guard)
	})
}

// singleValued says whether a flag takes exactly one value: not a switch
// (a flag usable without a value) and not a list.
func singleValued(f *pflag.Flag) bool {
	if f.NoOptDefVal != "" {
		return false
	}
	if _, ok := f.Value.(pflag.SliceValue); ok {
		return false
	}
	typ := f.Value.Type()
	return !strings.HasSuffix(typ, "Slice") && !strings.HasSuffix(typ, "Array") && typ != "count" && typ != "bool"
}

// onceValue is a flag value that takes one value only, given once or
// repeated as it was.
type onceValue struct {
	pflag.Value
	flag  *pflag.Flag
	first string
	set   bool
}

func (v *onceValue) Set(s string) error {
	if v.set {
		if s == v.first {
			return nil
		}
		return &repeatedFlagError{name: v.flag.Name, first: v.first, second: s}
	}
	v.set, v.first = true, s
	return v.Value.Set(s)
}

// repeatedFlagError is the error of a one-value flag given twice.
type repeatedFlagError struct{ name, first, second string }

func (e *repeatedFlagError) Error() string {
	return fmt.Sprintf("--%s is given twice with different values (%q, then %q); give it once", e.name, e.first, e.second)
}
