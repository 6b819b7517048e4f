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
	"kk node write":    {"summary": "description", "tags": "tag", "from": "body-file"},
	"kk graph create":  {"knowledge-file": "body-file"},
	"kk graph update":  {"knowledge-file": "body-file", "version": "expect-version"},
	"kk graph delete":  {"version": "expect-version"},
	"kk upsert":        {"version": "expect-version"},
	"kk delete":        {"version": "expect-version"},
	"kk pack export":   {"version": "pack-version", "summary": "description", "out": "output"},
	"kk client post":   {"content": "body", "file": "body-file", "tags": "tag"},
	"kk client edit":   {"content": "body", "file": "body-file", "tags": "tag"},
	"kk client get":    {"tags": "tag"},
	"kk client search": {"tags": "tag"},
	"kk graph export":  {"types": "type"},
}

// applyFlagAliases installs flagAliases on the command tree. The names a
// flag is typed by are recorded in app (see App.flagName), so that an
// error names the flag as the person typed it.
func applyFlagAliases(root *cobra.Command, app *App) {
	walkTree(root, func(c *cobra.Command) {
		aliases, ok := flagAliases[c.CommandPath()]
		if !ok {
			return
		}
		fs := c.Flags()
		fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
			n, ok := aliases[name]
			if !ok {
				n = name
			}
			app.typedFlag(fs, n, name, ok)
			return pflag.NormalizedName(n)
		})
	})
}

// typedFlagKey is a flag of one flag set, by its own name.
type typedFlagKey struct {
	fs   *pflag.FlagSet
	name string
}

// typedName is what App records of a flag that has old names: the name
// the argument pflag parses gave it by (last), and the old name it was
// typed by, if any. pflag looks a flag up by the name typed, then again
// by its own name to set it: that second lookup (pending) leaves last as
// it was.
type typedName struct {
	last, old string
	pending   bool
}

// typedFlag records that the flag name of fs was looked up as typed, an
// old name of it when old.
func (a *App) typedFlag(fs *pflag.FlagSet, name, typed string, old bool) {
	if a.typed == nil {
		a.typed = map[typedFlagKey]typedName{}
	}
	k := typedFlagKey{fs, name}
	t := a.typed[k]
	switch {
	case old:
		t.last, t.old, t.pending = typed, typed, true
	case t.pending:
		t.pending = false
	default:
		t.last = typed
	}
	a.typed[k] = t
}

// flagName is the flag name of fs as the command line typed it, with its
// dashes: its old name when it was given by that (flagAliases: kk node
// write --from for --body-file), else its own.
func (a *App) flagName(fs *pflag.FlagSet, name string) string {
	if t := a.typed[typedFlagKey{fs, name}]; t.old != "" {
		return "--" + t.old
	}
	return "--" + name
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
func refuseRepeatedFlags(root *cobra.Command, app *App) {
	walkTree(root, func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if _, ok := f.Value.(*onceValue); ok || !singleValued(f) {
					return
				}
				f.Value = &onceValue{Value: f.Value, flag: f, typed: func() string {
					if t := app.typed[typedFlagKey{fs, f.Name}]; t.last != "" {
						return t.last
					}
					return f.Name
				}}
			})
		}
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
	flag *pflag.Flag
	// typed is the name the argument being parsed gave the flag by (an
	// old name of it, or its own: see applyFlagAliases).
	typed     func() string
	first     string
	firstName string
	set       bool
}

func (v *onceValue) Set(s string) error {
	if v.set {
		if s == v.first {
			return nil
		}
		return &repeatedFlagError{name: v.typed(), firstName: v.firstName, first: v.first, second: s}
	}
	v.set, v.first, v.firstName = true, s, v.typed()
	return v.Value.Set(s)
}

// repeatedFlagError is the error of a one-value flag given twice: name is
// the name it was given by the second time, firstName the first.
type repeatedFlagError struct{ name, firstName, first, second string }

func (e *repeatedFlagError) Error() string {
	name := "--" + e.name
	if e.firstName != e.name {
		name += " (the same flag as --" + e.firstName + ")"
	}
	return fmt.Sprintf("%s is given twice with different values (%q, then %q); give it once", name, e.first, e.second)
}
