package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/install"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/picture"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/internal/store"
)

const completionLong = `Print the script that makes SHELL complete kk's commands and flags, and
the knowledge base's own names: node ids (kk node show, kk node delete and its --redirect-to, kk node rename, kk read,
kk delete, kk graph get/update/delete, kk changelog, kk graph export
--around),
folders (--folder), tags (--tag), molecules (--molecule), node types
(--type), harness names (--harness, --harnesses), schema names (kk schema,
kk validate), prompt names and hook events. Names come from the knowledge
base the command line is in (or --root, or KK_ROOT) at the moment you press
TAB.

Load it for the current shell, or install it once:

  bash        source <(kk completion bash)
              kk completion bash > ~/.local/share/bash-completion/completions/kk
  zsh         kk completion zsh > "${fpath[1]}/_kk"   (with compinit enabled)
  fish        kk completion fish > ~/.config/fish/completions/kk.fish
  powershell  kk completion powershell | Out-String | Invoke-Expression

The release archives carry these scripts in completions/.

bash: the script uses the bash-completion package when it is loaded
(Debian and Ubuntu: apt install bash-completion; Fedora: dnf install
bash-completion; macOS: brew install bash-completion@2, then source it from
~/.bash_profile as brew says), and it is what loads the installed file from
~/.local/share/bash-completion/completions/ by itself. Without the package,
source the script from ~/.bashrc; it then splits the command line as bash
does, so a word holding = or : completes less well. kk doctor says whether
bash-completion is there when kk's bash completion is set up.`

// cobraWordsByRef is the line of cobra's bash script that needs the
// bash-completion package: without it bash prints
// "_get_comp_words_by_ref: command not found" at every TAB.
// wordsByRefFallback replaces it: the package's function when it is
// loaded, else the words as bash split them (completion_bash).
const (
	cobraWordsByRef    = "    _get_comp_words_by_ref \"$@\" cur prev words cword\n"
	wordsByRefFallback = `    if declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
        _get_comp_words_by_ref "$@" cur prev words cword
    else
        # No bash-completion package: take the words as bash split them.
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD-1]}
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    fi
`
)

type completionOpts struct {
	shell          string
	noDescriptions bool
}

func newCompletionCmd(app *App) *cobra.Command {
	var o completionOpts
	cmd := &cobra.Command{
		Use: "completion bash|zsh|fish|powershell",
		Example: `  source <(kk completion bash)
  kk completion zsh > "${fpath[1]}/_kk"
  kk completion fish > ~/.config/fish/completions/kk.fish`,
		Annotations: map[string]string{noJSON: "a shell script"},
		Short:       "Print a shell completion script",
		Long:        completionLong,
		ValidArgs:   []string{"bash", "zsh", "fish", "powershell"},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || !slices.Contains(cmd.ValidArgs, args[0]) {
				return usagef("completion needs one shell: bash, zsh, fish or powershell")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.shell = args[0]
			return runCompletion(cmd, app, o)
		},
	}
	cmd.Flags().BoolVar(&o.noDescriptions, "no-descriptions", false, "complete names without their descriptions")
	return cmd
}

func runCompletion(cmd *cobra.Command, app *App, o completionOpts) error {
	root, out, desc := cmd.Root(), app.IO.Out, !o.noDescriptions
	switch o.shell {
	case "bash":
		var b bytes.Buffer
		if err := root.GenBashCompletionV2(&b, desc); err != nil {
			return err
		}
		_, err := io.WriteString(out, strings.Replace(b.String(), cobraWordsByRef, wordsByRefFallback, 1))
		return err
	case "zsh":
		if desc {
			return root.GenZshCompletion(out)
		}
		return root.GenZshCompletionNoDesc(out)
	case "fish":
		return root.GenFishCompletion(out, desc)
	default:
		if desc {
			return root.GenPowerShellCompletionWithDesc(out)
		}
		return root.GenPowerShellCompletion(out)
	}
}

// completer lists the candidates for one argument or flag value.
type completer func(app *App, args []string, toComplete string) []string

// argCompleters complete the positional arguments of these commands: one
// completer per position, the last repeating.
var argCompleters = map[string][]completer{
	"kk node show":        {completeIDs},
	"kk node delete":      {completeIDs},
	"kk node rename":      {completeIDs},
	"kk read":             {completeIDs},
	"kk delete":           {completeIDs},
	"kk graph get":        {completeIDs},
	"kk graph update":     {completeIDs},
	"kk graph delete":     {completeIDs},
	"kk graph create":     {completeWords(graph.KindAtom, graph.KindMolecule)},
	"kk changelog append": {completeWords(graph.KindAtom, graph.KindMolecule), completeParentIDs},
	"kk changelog search": {completeWords(graph.KindAtom, graph.KindMolecule), completeParentIDs},
	"kk schema":           {completeSchemas},
	"kk validate":         {completeSchemas, nil},
	"kk prompt show":      {completePrompts},
	"kk hook":             {completeHookEvents},
	"kk completion":       {completeWords("bash", "zsh", "fish", "powershell")},
}

// commandFlagCompleters complete the values of one command's flag, ahead
// of flagCompleters: the graph commands' --type is atom or molecule, not
// a leaf type.
var commandFlagCompleters = map[string]completer{
	"kk graph get --type":          completeWords(graph.KindAtom, graph.KindMolecule),
	"kk graph search --type":       completeWords(graph.KindAtom, graph.KindMolecule),
	"kk graph update --type":       completeWords(graph.KindAtom, graph.KindMolecule),
	"kk graph delete --type":       completeWords(graph.KindAtom, graph.KindMolecule),
	"kk graph export --format":     completeWords(picture.Formats...),
	"kk graph export --view":       completeWords(picture.Views...),
	"kk graph export --around":     completeIDs,
	"kk node delete --redirect-to": completeIDs,
	"kk graph export --type":       completeList(completeTypes),
	"kk node write --tag":          completeList(completeTags),
	"kk client post --tag":         completeList(completeTags),
	"kk client edit --tag":         completeList(completeTags),
}

// flagCompleters complete flag values by the flag's name, on every
// command that has the flag.
var flagCompleters = map[string]completer{
	"folder":    completeFolders,
	"tag":       completeTags,
	"molecule":  completeMolecules,
	"harness":   completeHarnesses,
	"harnesses": completeList(completeHarnesses),
	"type":      completeTypes,
}

// addCompletions attaches the completers to the command tree. It returns
// the completers it could not attach (a renamed command or flag), which
// the tests report.
func addCompletions(root *cobra.Command, app *App) (missing []string) {
	attached := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := c.CommandPath()
		if list, ok := argCompleters[path]; ok {
			attached[path] = true
			c.ValidArgsFunction = argsCompletion(app, list)
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			fn, ok := commandFlagCompleters[path+" --"+f.Name]
			if ok {
				attached[path+" --"+f.Name] = true
			} else if fn, ok = flagCompleters[f.Name]; ok {
				attached["--"+f.Name] = true
			} else {
				return
			}
			directive := cobra.ShellCompDirectiveNoFileComp
			if listFlags[f.Name] || listFlags[path+" --"+f.Name] {
				directive |= cobra.ShellCompDirectiveNoSpace
			}
			_ = c.RegisterFlagCompletionFunc(f.Name, func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return fn(app, args, toComplete), directive
			})
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for path := range argCompleters {
		if !attached[path] {
			missing = append(missing, path)
		}
	}
	for key := range commandFlagCompleters {
		if !attached[key] {
			missing = append(missing, key)
		}
	}
	for name := range flagCompleters {
		if !attached["--"+name] {
			missing = append(missing, "--"+name)
		}
	}
	slices.Sort(missing)
	return missing
}

// listFlags take a comma-separated list: the shell must not add a space
// after a completed item.
// They are named by the flag, or by the command and the flag.
var listFlags = map[string]bool{"harnesses": true, "kk graph export --type": true, "kk node write --tag": true,
	"kk client post --tag": true, "kk client edit --tag": true}

func argsCompletion(app *App, list []completer) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(list) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		i := min(len(args), len(list)-1)
		if len(args) >= len(list) && !strings.HasSuffix(cmd.Use, "...") && !strings.Contains(cmd.Use, "...]") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if list[i] == nil {
			return nil, cobra.ShellCompDirectiveDefault // a file name
		}
		return list[i](app, args, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completionTree reads the knowledge base's leaves for a completion; nil
// when there is no knowledge base or it cannot be read (then nothing is
// offered, and nothing is printed).
func completionTree(app *App) *store.Tree {
	if app.Root == "" && app.Getenv != nil {
		app.Root = app.Getenv("KK_ROOT") // the root's pre-run does not run for completions
	}
	app.skipsReported = true // a completion prints candidates and nothing else
	k, err := app.KB()
	if err != nil {
		return nil
	}
	t, err := index.ReadTree(context.Background(), k)
	if err != nil {
		return nil
	}
	return t
}

// described filters name/description pairs by prefix and formats them as
// cobra's "name\tdescription" candidates.
func described(pairs [][2]string, toComplete string) []string {
	var out []string
	for _, p := range pairs {
		if !strings.HasPrefix(strings.ToLower(p[0]), strings.ToLower(toComplete)) {
			continue
		}
		if p[1] != "" {
			out = append(out, p[0]+"\t"+oneLine(p[1]))
		} else {
			out = append(out, p[0])
		}
	}
	return out
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}

func completeIDs(app *App, _ []string, toComplete string) []string {
	return completeLeaves(app, toComplete, func(*node.Node) bool { return true })
}

func completeLeaves(app *App, toComplete string, keep func(*node.Node) bool) []string {
	t := completionTree(app)
	if t == nil {
		return nil
	}
	var pairs [][2]string
	for _, n := range t.Leaves {
		if n.ID != "" && keep(n) {
			pairs = append(pairs, [2]string{n.ID, n.Title})
		}
	}
	slices.SortFunc(pairs, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return described(pairs, toComplete)
}

func completeMolecules(app *App, _ []string, toComplete string) []string {
	return completeLeaves(app, toComplete, func(n *node.Node) bool { return n.Type == graph.KindMolecule })
}

// completeParentIDs completes the parent id of kk changelog, after its
// parent type.
func completeParentIDs(app *App, args []string, toComplete string) []string {
	molecule := len(args) > 0 && args[0] == graph.KindMolecule
	return completeLeaves(app, toComplete, func(n *node.Node) bool { return (n.Type == graph.KindMolecule) == molecule })
}

func completeFolders(app *App, _ []string, toComplete string) []string {
	t := completionTree(app)
	if t == nil {
		return nil
	}
	var pairs [][2]string
	for _, d := range t.Dirs {
		if d != "" {
			pairs = append(pairs, [2]string{d, ""})
		}
	}
	return described(pairs, toComplete)
}

func completeTags(app *App, _ []string, toComplete string) []string {
	t := completionTree(app)
	if t == nil {
		return nil
	}
	count := map[string]int{}
	for _, n := range t.Leaves {
		for _, tag := range n.Tags {
			count[tag]++
		}
	}
	return described(countedPairs(count), toComplete)
}

func completeTypes(app *App, args []string, toComplete string) []string {
	count := map[string]int{}
	if t := completionTree(app); t != nil {
		for _, n := range t.Leaves {
			if n.Type != "" {
				count[n.Type]++
			}
		}
	}
	return described(countedPairs(count), toComplete)
}

// countedPairs sorts names and describes each by how many leaves have it.
func countedPairs(count map[string]int) [][2]string {
	pairs := make([][2]string, 0, len(count))
	for name, n := range count {
		pairs = append(pairs, [2]string{name, fmt.Sprintf("%d node(s)", n)})
	}
	slices.SortFunc(pairs, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return pairs
}

func completeHarnesses(app *App, _ []string, toComplete string) []string {
	var pairs [][2]string
	for _, id := range app.harnesses().IDs() {
		pairs = append(pairs, [2]string{id, ""})
	}
	return described(pairs, toComplete)
}

func completeSchemas(_ *App, _ []string, toComplete string) []string {
	var pairs [][2]string
	for _, e := range schema.Entries() {
		pairs = append(pairs, [2]string{e.Name, e.Description})
	}
	return described(pairs, toComplete)
}

func completePrompts(_ *App, _ []string, toComplete string) []string {
	var pairs [][2]string
	for _, name := range install.PromptNames() {
		pairs = append(pairs, [2]string{name, ""})
	}
	return described(pairs, toComplete)
}

func completeHookEvents(_ *App, _ []string, toComplete string) []string {
	var pairs [][2]string
	for _, e := range harness.Events {
		pairs = append(pairs, [2]string{string(e), ""})
	}
	return described(pairs, toComplete)
}

func completeWords(words ...string) completer {
	return func(_ *App, _ []string, toComplete string) []string {
		var pairs [][2]string
		for _, w := range words {
			pairs = append(pairs, [2]string{w, ""})
		}
		return described(pairs, toComplete)
	}
}

// completeList completes the last item of a comma-separated list, keeping
// the items before it and leaving out those already given.
func completeList(item completer) completer {
	return func(app *App, args []string, toComplete string) []string {
		done, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		given := strings.Split(done, ",")
		var out []string
		for _, c := range item(app, args, last) {
			name, desc, _ := strings.Cut(c, "\t")
			if slices.Contains(given, name) {
				continue
			}
			if desc != "" {
				out = append(out, done+name+"\t"+desc)
			} else {
				out = append(out, done+name)
			}
		}
		return out
	}
}
