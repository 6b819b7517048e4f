// Package githooks installs, removes and checks the git hooks kk puts into
// a repository, and sets up merges of the generated index files:
//
//   - post-checkout (after a branch checkout) and post-merge (after a
//     merge, git pull's included) bring the search index of the checked
//     out branch up to date by running `kk sync` in the background;
//   - kk's merge driver (MergeDriver) keeps one side of a generated file
//     that both sides changed, so that no merge, rebase or cherry-pick
//     stops on ENTRY.md, GRAPH.md or an index.md; then post-merge (a merge
//     commit), post-commit (a cherry-pick or revert when its last commit is
//     made, a merge concluded by git commit) and post-rewrite (the end of
//     a rebase, git pull --rebase's included) regenerate the generated
//     files of each commit the operation made from that commit's own
//     leaves (RegenerateCommits), so that every commit's generated files
//     match its leaves;
//   - post-applypatch regenerates the commits git am made (ORIG_HEAD..HEAD)
//     once it made its last one (git am runs neither post-commit nor
//     post-rewrite);
//   - post-index-change regenerates the work tree's generated files once
//     git applied the autostash of a rebase or a merge (AutostashMark), or
//     a stash or a checkout with --merge in which the merge driver kept a
//     side (KeptMark).
//
// The hooks never change git's outcome.
//
// The hooks go into the folder git actually runs hooks from, as git itself
// reports it (`git rev-parse --git-path hooks`, which honours
// core.hooksPath, relative or absolute, and gives linked worktrees the
// common hooks folder). A hook that was already there is moved aside to
// <name>.kk-chained, and kk's hook runs it first with the same arguments
// and standard input, and exits with its status. Uninstall moves it back,
// so the user's hook returns byte for byte, with its mode.
package githooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/store"
)

// The hooks kk installs.
const (
	PostApplypatch  = "post-applypatch"
	PostCheckout    = "post-checkout"
	PostCommit      = "post-commit"
	PostIndexChange = "post-index-change"
	PostMerge       = "post-merge"
	PostRewrite     = "post-rewrite"
)

// Names lists the hooks kk installs, sorted.
var Names = []string{PostApplypatch, PostCheckout, PostCommit, PostIndexChange, PostMerge, PostRewrite}

// AutostashMark names the file, under the knowledge base's .state folder,
// by which kk's post-rewrite, post-merge and post-checkout hooks tell its
// post-index-change hook that git is about to apply an autostash (git
// rebase --autostash, git pull --rebase with rebase.autoStash, git merge
// --autostash) on the commit it holds. Git applies the stash after every
// other hook has run, and kk's merge driver keeps the commit's generated
// files against the stash's, so the work tree's generated files must be
// generated again from its leaves once the stash is in: the next index
// write that updates the work tree is the stash's, and the hook does it
// then.
const AutostashMark = "autostash-head"

// ChainSuffix names the file a hook that was in place before kk is moved
// to: post-checkout becomes post-checkout.kk-chained. Git runs only hooks
// named exactly after an event, so it never runs this file itself.
const ChainSuffix = ".kk-chained"

// markerPrefix starts the line that identifies a hook as kk's.
const markerPrefix = "# kk-git-hook: "

// scriptVersion changes whenever the generated script changes in a way
// that `kk init --upgrade` should roll out.
const scriptVersion = "10"

// defaultCommand runs kk when the installed-version record names no
// other command.
const defaultCommand = "kk"

// Options configure Install.
type Options struct {
	// Upgrade rewrites kk's hooks that differ from what this kk writes
	// and restores their executable bit. Without it, hooks of kk's that
	// are already in place are left as they are.
	Upgrade bool
}

// Change is one file Install or Uninstall created, updated or removed.
// Path is relative to the knowledge base's root when the file is inside
// it, else absolute, with forward slashes.
type Change struct {
	Path   string `json:"path"`
	Action string `json:"action"` // created, updated, removed
}

// Result is what Install or Uninstall did.
type Result struct {
	// Dir is the hooks folder git uses, shown like Change.Path.
	Dir      string   `json:"dir"`
	Changes  []Change `json:"changes"`
	Warnings []string `json:"warnings"`
	// NoHooks, when not empty, says why no hook was installed: git runs
	// none in this repository (core.hooksPath is not a folder).
	NoHooks string `json:"-"`
}

// ErrNotWorkTree means the knowledge base is not inside a git work tree,
// so there is no hooks folder to work with.
var ErrNotWorkTree = errors.New("not inside a git work tree")

// repo is what the hook functions need to know about the repository
// holding a knowledge base.
type repo struct {
	k *store.KB
	// dir is the hooks folder git uses; defaultDir is $GIT_COMMON_DIR/hooks,
	// the one it uses without core.hooksPath.
	dir, defaultDir string
	// hooksPath is core.hooksPath as configured ("" when unset).
	hooksPath string
	// rel is the knowledge base's root relative to the work tree's top
	// folder ("." when they are the same), where hooks run.
	rel string
	// command runs kk.
	command string
}

// open finds the hooks folders and the hook settings of k's repository.
// The hooks folder is the one git reports (`git rev-parse --git-path
// hooks`): core.hooksPath when it is set, a relative value being relative
// to the work tree's top folder, else $GIT_COMMON_DIR/hooks, which linked
// worktrees share.
func open(ctx context.Context, k *store.KB) (*repo, error) {
	out, err := gitx.Read(ctx, k.Root, "rev-parse", "--is-inside-work-tree", "--git-path", "hooks", "--git-common-dir", "--show-toplevel")
	if errors.Is(err, gitx.ErrNoGit) {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\r\n"), "\n")
	if err != nil || len(lines) != 4 || lines[0] != "true" {
		if !gitx.InWorkTree(ctx, k.Root) {
			return nil, ErrNotWorkTree
		}
		if err == nil {
			err = fmt.Errorf("git rev-parse printed %q", out)
		}
		return nil, fmt.Errorf("finding the git hooks folder: %w", err)
	}
	// git prints paths relative to the folder it ran in.
	abs := func(p string) string {
		p = strings.TrimRight(p, "\r")
		if !filepath.IsAbs(p) {
			p = filepath.Join(k.Root, p)
		}
		return filepath.Clean(p)
	}
	r := &repo{k: k, command: kkCommand(k), dir: abs(lines[1]), defaultDir: filepath.Join(abs(lines[2]), "hooks")}
	if r.rel, err = relPath(abs(lines[3]), k.Root); err != nil {
		return nil, err
	}
	if out, err := gitx.Read(ctx, k.Root, "config", "--get", "core.hooksPath"); err == nil {
		r.hooksPath = strings.TrimSpace(string(out))
	}
	return r, nil
}

// noHooks says, when git runs no hooks in r's repository, why and what to
// do instead ("" when it runs them): core.hooksPath names something that
// is not a folder, /dev/null most often, the usual way to turn every hook
// off.
func (r *repo) noHooks() string {
	why, _ := r.noHooksFix()
	return why
}

// noHooksFix is noHooks, and what to do instead.
func (r *repo) noHooksFix() (why, fix string) {
	if r.hooksPath == "" {
		return "", ""
	}
	fi, err := os.Stat(r.dir)
	if err != nil || fi.IsDir() {
		return "", ""
	}
	return fmt.Sprintf("git runs no hooks in this repository: core.hooksPath is %s, which is not a folder, so kk's git hooks are not installed (its merge drivers are: a merge never stops on ENTRY.md, GRAPH.md or an index.md)", r.hooksPath),
		"after a merge, a rebase, a cherry-pick or git am, run `kk index rebuild --commits <range>` (`kk index rebuild --commits 'HEAD^!'` after a merge) to regenerate the generated files of the commits made; or unset core.hooksPath and run `kk init`"
}

// inWorkTree returns the top of the work tree holding root (a folder of
// the knowledge base) and path, a folder inside it, relative to that top.
func inWorkTree(ctx context.Context, root, path string) (top, rel string, err error) {
	if top, err = gitx.TopLevel(ctx, root); err != nil {
		return "", "", err
	}
	if rel, err = relPath(top, path); err != nil {
		return "", "", err
	}
	return top, rel, nil
}

// relPath returns target relative to base, comparing them with symbolic
// links resolved (git prints resolved paths).
func relPath(base, target string) (string, error) {
	if b, err := filepath.EvalSymlinks(base); err == nil {
		base = b
	}
	if t, err := filepath.EvalSymlinks(target); err == nil {
		target = t
	}
	rel, err := filepath.Rel(base, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("the knowledge base %s is not inside the work tree %s", target, base)
	}
	return filepath.ToSlash(rel), nil
}

// sameDir reports whether a and b name the same folder.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// kkCommand returns the command kk's hooks run kk with: the one recorded by
// `kk init --kk-command` in installed-version, else defaultCommand.
func kkCommand(k *store.KB) string {
	if inst, err := k.ReadInstalled(); err == nil && inst.KKCommand != "" {
		return inst.KKCommand
	}
	return defaultCommand
}

// show formats a path for messages and changes.
func (r *repo) show(p string) string {
	if rel, err := relPath(r.k.Root, p); err == nil {
		return rel
	}
	return filepath.ToSlash(p)
}

// script returns kk's hook for the event name. command runs kk; rel is
// the knowledge base's root relative to the work tree's top folder, where
// git runs hooks.
func script(name, command, rel string) []byte {
	var b bytes.Buffer
	b.WriteString("#!/bin/sh\n")
	b.WriteString(markerPrefix + name + " v" + scriptVersion + "\n")
	b.WriteString("# Written by `kk init`. " + hookPurpose[name] + "\n")
	b.WriteString(`# The hook that was here before kk, if any, is kept as
# ` + name + ChainSuffix + ` and runs first, with the same arguments and input
# (a sh script with $0 naming this hook, as a hook manager such as husky
# finds what to run from it); this hook exits with its status.
# KK_GIT_HOOKS=off skips kk's part,
# KK_GIT_HOOKS=wait waits for its background part; it never runs under
# KK_INTERNAL (a process kk started). ` + "`kk uninstall --git-hooks`" + ` removes
# this hook and puts the earlier one back.
kk_status=0
kk_chained="${0%/*}/` + name + ChainSuffix + `"
if [ -x "$kk_chained" ]; then
	kk_first=
	IFS= read -r kk_first <"$kk_chained" || :
	case "$kk_first" in
	'#!/bin/sh' | '#!/usr/bin/sh' | '#!/usr/bin/env sh')
		sh -c 'kk_f=$1; shift; . "$kk_f"' "$0" "$kk_chained" "$@"
		;;
	*)
		"$kk_chained" "$@"
		;;
	esac
	kk_status=$?
fi
`)
	// kk_found: whether the shell finds kk's command (its first word, as
	// the shell splits it) on the PATH git gave the hook; a GUI client or
	// an IDE may give one without kk's folder.
	b.WriteString(`kk_found() {
	set -- ` + command + `
	command -v "$1" >/dev/null 2>&1
}
`)
	cond := `[ -z "${KK_INTERNAL-}" ] && [ "${KK_GIT_HOOKS-}" != off ]`
	run := func(args string) string {
		r := command + " " + args + " --root ."
		if rel != "." {
			r = "(cd " + shellQuote(rel) + " && " + r + ")"
		}
		return r
	}
	// subst is run(args) as the command of a command substitution: "$("
	// then a space before the subshell of a knowledge base in a
	// subfolder, as "$((" opens an arithmetic expansion (dash, the sh of
	// Debian and Ubuntu, fails on the whole hook).
	subst := func(args string) string {
		r := run(args)
		if strings.HasPrefix(r, "(") {
			r = " " + r
		}
		return "$(" + r
	}
	// kk runs a regeneration, or says in words that kk was not found (the
	// shell's "kk: not found" says nothing of what was left undone).
	missing := "kk: git's " + name + " hook did not find kk (" + command + ") on the PATH git gave it, so ENTRY.md, GRAPH.md and the index.md files were not regenerated; run `kk index rebuild --check` where kk is found, and `kk init --upgrade --kk-command <kk's full path>` so that the hooks find it"
	kk := func(args string) string {
		return "{ if kk_found; then " + run(args) + " >/dev/null </dev/null; else echo " + shellQuote(missing) + " >&2; fi; }"
	}
	// The sync is silent when kk is not found: the next command that
	// uses the index syncs it.
	sync := run("sync") + " >/dev/null 2>&1 </dev/null"
	background := "\tif [ \"${KK_GIT_HOOKS-}\" = wait ]; then\n\t\t" + sync + "\n\telse\n\t\t" + sync + " &\n\tfi\n"
	// Each of kk's merge drivers, defined again where the config lost it
	// (a fresh clone, a config reset): the generated files', the
	// ledger's and the folder summaries'.
	driver := ""
	for _, d := range mergeDrivers(command, rel) {
		driver += "\tgit config --get merge." + d[0] + ".driver >/dev/null 2>&1 ||\n\t\t{ git config merge." + d[0] + ".name " + shellQuote(d[1]) +
			" && git config merge." + d[0] + ".driver " + shellQuote(d[2]) + "; }\n"
	}
	// The autostash mark (AutostashMark), written when the knowledge
	// base is there: HEAD, which the stash is applied on.
	kbDir := store.DirName
	if rel != "." {
		kbDir = rel + "/" + store.DirName
	}
	mark := shellQuote(kbDir + "/.state/" + AutostashMark)
	// The generated files, as a grep pattern (-e) of paths from the top.
	reKB := strings.ReplaceAll(kbDir, ".", `\.`)
	generatedRE := shellQuote("^"+reKB+`/ENTRY\.md$`) + " -e " + shellQuote("^"+reKB+`/GRAPH\.md$`) + " -e " + shellQuote("^"+reKB+`/nodes/\(.*/\)\{0,1\}index\.md$`)
	// The generated files, as git pathspecs.
	generated := shellQuote(kbDir+"/ENTRY.md") + " " + shellQuote(kbDir+"/GRAPH.md") + " " + shellQuote(":(glob)"+kbDir+"/nodes/**/index.md")
	writeMark := "[ -d " + shellQuote(kbDir) + " ] && mkdir -p " + shellQuote(kbDir+"/.state") + " && git rev-parse -q --verify HEAD >" + mark + " 2>/dev/null"
	switch name {
	case PostCheckout:
		b.WriteString("if [ \"${3-}\" = 1 ] && " + cond + "; then\n")
		b.WriteString(driver)
		b.WriteString(`	# a rebase that only fast-forwards (nothing left to pick) applies its
	# autostash next
	kk_git_dir="$(git rev-parse --git-dir 2>/dev/null)"
	if [ -f "$kk_git_dir/rebase-merge/autostash" ] && ! grep -q '^[^#]' "$kk_git_dir/rebase-merge/git-rebase-todo" 2>/dev/null; then
		` + writeMark + `
	fi
`)
		b.WriteString(background)
		b.WriteString("fi\n")
	case PostIndexChange:
		kept := shellQuote(kbDir + "/.state/" + KeptMark)
		// A conflict git left in a leaf (the stash did not apply cleanly):
		// the leaf would drop out of the generated files; leave them as
		// git left them and say what to run.
		rebuild := func(indent, args string) string {
			return "if [ -n \"$(git ls-files -u -- " + shellQuote(kbDir) + " 2>/dev/null | head -n 1)\" ]; then\n" +
				indent + "\techo \"kk: a leaf holds a git conflict; once it is resolved, run \\`kk index rebuild\\` so that ENTRY.md, GRAPH.md and the index.md files name what git brought in\" >&2\n" +
				indent + "else\n" +
				indent + "\t" + kk(args) + "\n" +
				indent + "fi"
		}
		// none of git's operations that stop for a person (a conflict) or
		// commit later (a merge, a rebase) is in progress; a cherry-pick or
		// revert of several commits with --no-commit goes through
		// sequencer/ and commits nothing
		notStopped := `[ -n "$kk_git_dir" ] && [ ! -e "$kk_git_dir/MERGE_HEAD" ] && [ ! -e "$kk_git_dir/CHERRY_PICK_HEAD" ] &&
			[ ! -e "$kk_git_dir/REVERT_HEAD" ] && [ ! -d "$kk_git_dir/rebase-merge" ] && [ ! -d "$kk_git_dir/rebase-apply" ]`
		inProgress := notStopped + ` && [ ! -d "$kk_git_dir/sequencer" ]`
		b.WriteString("if [ \"${1-}\" = 1 ] && [ -f " + mark + " ] && " + cond + "; then\n")
		b.WriteString(`	# git applied the autostash a rebase or a merge left: generate the work
	# tree's index files again from its leaves, the stash's included
	kk_head="$(cat ` + mark + ` 2>/dev/null)"
	rm -f ` + mark + ` ` + kept + `
	if [ -n "$kk_head" ] && [ "$kk_head" = "$(git rev-parse -q --verify HEAD 2>/dev/null)" ]; then
		` + rebuild("\t\t", "index rebuild") + `
	fi
elif [ "${1-}" = 1 ] && [ -f ` + kept + ` ] && ` + cond + `; then
	# kk's merge driver kept one side of a generated file in what git just
	# wrote. After git stash apply or pop, or a checkout with --merge (no
	# commit follows, so no other hook regenerates): generate the work
	# tree's index files again from its leaves; after git cherry-pick or
	# git revert with --no-commit, stage them too, for the commit to come.
	# A merge, a rebase, a cherry-pick or a revert that commits
	# regenerates its commits when it ends.
	rm -f ` + kept + `
	kk_git_dir="$(git rev-parse --git-dir 2>/dev/null)"
	kk_op=" $(ps -o args= -p "$PPID" 2>/dev/null || tr '\000' ' ' 2>/dev/null <"/proc/$PPID/cmdline") "
	# kk_resolve CONTINUE WHY: git stopped a merge, a rebase, a cherry-pick
	# or a revert on conflicts. Notes whose conflicts lie only in
	# kk_version, the counter kk keeps (two people changed different parts
	# of one note with kk), take the higher version and one more and are
	# staged. When the conflicts left in the knowledge base are all in
	# generated files (a folder's index.md that one side removed with the
	# folder's last note and the other changed, a modify/delete conflict no
	# merge driver sees), the files are generated again from the merged
	# notes and staged. Either way it says what was done and what concludes
	# the operation (kk's other hooks regenerate the commits it makes).
	kk_resolve() {
		kk_did=
		if kk_found; then
			kk_v="` + subst("git-resolve-versions") + ` 2>/dev/null </dev/null)"
			if [ -n "$kk_v" ]; then
				printf '%s\n' "$kk_v" | while IFS="$(printf '\t')" read -r kk_p kk_n; do
					echo "kk: the conflicts git left in $kk_p were only in kk_version, which kk keeps: it takes $kk_n, and the note is staged" >&2
				done
				kk_did=1
			fi
		fi
		kk_u="$(git -c core.quotepath=off ls-files -u -- ` + shellQuote(kbDir) + ` 2>/dev/null | cut -f2 | sort -u)"
		if [ -n "$kk_u" ] && [ -z "$(printf '%s\n' "$kk_u" | grep -v -e ` + generatedRE + `)" ] && kk_found &&
			` + run("index rebuild --stage") + ` >/dev/null 2>&1 </dev/null; then
			kk_u="$(printf '%s\n' "$kk_u" | tr '\n' ' ' | sed 's/ $//; s/ /, /g')"
			echo "kk: the conflicts git left in files kk generates ($kk_u) are resolved: kk generated them again from the merged notes and staged them" >&2
			kk_did=1
		elif [ -n "$kk_u" ] && [ -n "$(printf '%s\n' "$kk_u" | grep -e ` + generatedRE + `)" ]; then
			# conflicts in notes too (a modify/delete of a folder's note
			# and its index.md): the files are generated once the notes
			# are resolved
			kk_g="$(printf '%s\n' "$kk_u" | grep -e ` + generatedRE + ` | tr '\n' ' ' | sed 's/ $//; s/ /, /g')"
			kk_n="$(printf '%s\n' "$kk_u" | grep -v -e ` + generatedRE + ` | tr '\n' ' ' | sed 's/ $//; s/ /, /g')"
			echo "kk: git left conflicts in $kk_n, which a person resolves, and in $kk_g, which kk generates: resolve the first, then run \` + "`" + `kk index rebuild --stage\` + "`" + ` and \` + "`" + `$1\` + "`" + `" >&2
		fi
		if [ -n "$kk_did" ]; then
			if [ -z "$(git ls-files -u 2>/dev/null | head -n 1)" ]; then
				echo "kk: no conflict is left: run \` + "`" + `$1\` + "`" + ` $2" >&2
			else
				echo "kk: resolve the other conflicts, then \` + "`" + `$1\` + "`" + `" >&2
			fi
		fi
	}
	case "$kk_op" in
	*" cherry-pick "* | *" revert "*)
		case "$kk_op" in
		*" -n "* | *" --no-commit "*)
			if ` + notStopped + `; then
				` + rebuild("\t\t\t\t", "index rebuild --stage") + `
			fi
			;;
		*" cherry-pick "*) kk_resolve 'git cherry-pick --continue' 'to go on with the cherry-pick' ;;
		*) kk_resolve 'git revert --continue' 'to go on with the revert' ;;
		esac
		;;
	*" merge "* | *" pull "* | *" rebase "*)
		if [ -d "$kk_git_dir/rebase-merge" ] || [ -d "$kk_git_dir/rebase-apply" ]; then
			kk_resolve 'git rebase --continue' 'to go on with the rebase'
		else
			kk_resolve 'git commit' 'to conclude the merge'
		fi
		;;
	*" stash apply "* | *" stash pop "* | *" checkout "* | *" switch "*)
		if ` + inProgress + `; then
			` + rebuild("\t\t\t", "index rebuild") + `
			# a stash's untracked files (git stash -u) come back only after
			# this: their notes are not in the files just generated
			case "$kk_op" in
			*" stash "*)
				kk_stash=stash@{0}
				for kk_arg in $kk_op; do
					case "$kk_arg" in
					stash@*) kk_stash=$kk_arg ;;
					[0-9] | [0-9][0-9] | [0-9][0-9][0-9]) kk_stash="stash@{$kk_arg}" ;;
					esac
				done
				if git rev-parse -q --verify "$kk_stash^3" >/dev/null 2>&1; then
					echo "kk: the stash's untracked files are put back after ENTRY.md, GRAPH.md and the index.md files were merged; run \` + "`" + `kk index rebuild\` + "`" + ` so that they name its notes" >&2
				fi
				;;
			esac
		fi
		;;
	esac
`)
		b.WriteString("fi\n")
	case PostMerge:
		b.WriteString("if " + cond + "; then\n")
		b.WriteString(driver)
		b.WriteString("\tif [ \"${1-}\" = 1 ]; then\n")
		b.WriteString("\t\t# a squash merge: the commit that follows takes the regenerated files\n")
		b.WriteString("\t\t" + kk("index rebuild --stage") + "\n")
		b.WriteString("\telif git rev-parse -q --verify HEAD^2 >/dev/null 2>&1; then\n")
		b.WriteString("\t\tcase \"$(git log -g -1 --format=%gs HEAD 2>/dev/null)\" in\n")
		b.WriteString("\t\t*Fast-forward*) ;;\n")
		b.WriteString("\t\t*) " + kk("index rebuild --commits 'HEAD^!'") + " ;;\n")
		b.WriteString("\t\tesac\n")
		b.WriteString("\tfi\n")
		b.WriteString("\tif [ -f \"$(git rev-parse --git-dir 2>/dev/null)/MERGE_AUTOSTASH\" ]; then\n\t\t" + writeMark + "\n\tfi\n")
		b.WriteString(background)
		b.WriteString("fi\n")
	case PostCommit:
		b.WriteString("if " + cond + "; then\n")
		b.WriteString(`	kk_git_dir="$(git rev-parse --git-dir 2>/dev/null)"
	kk_range=
	kk_worktree=
	if [ -d "$kk_git_dir/rebase-merge" ] || [ -d "$kk_git_dir/rebase-apply" ]; then
		: # a rebase: post-rewrite regenerates its commits when it ends
	elif [ -f "$kk_git_dir/CHERRY_PICK_HEAD" ] || [ -f "$kk_git_dir/REVERT_HEAD" ] ||
		# git cherry-pick/revert --continue after a conflict leaves neither
		# file; the reflog says "commit (cherry-pick)", and a revert's commit
		# keeps its "Revert ..." subject (a false match only costs a check)
		case "$(git log -g -1 --format=%gs HEAD 2>/dev/null)" in cherry-pick*|revert*|'commit (cherry-pick)'*|'commit: Revert "'*) true ;; *) false ;; esac; then
		# the last commit of a cherry-pick or revert: all of its commits
		if [ ! -f "$kk_git_dir/sequencer/todo" ] || [ "$(grep -c . "$kk_git_dir/sequencer/todo")" -le 1 ]; then
			if [ -f "$kk_git_dir/sequencer/head" ]; then
				kk_range="$(cat "$kk_git_dir/sequencer/head")..HEAD"
			else
				kk_range='HEAD^!'
			fi
		fi
	elif git rev-parse -q --verify HEAD^2 >/dev/null 2>&1; then
		kk_range='HEAD^!'
	elif git rev-parse -q --verify HEAD^ >/dev/null 2>&1 &&
		! git diff-tree --quiet HEAD^ HEAD -- ` + shellQuote(kbDir) + ` 2>/dev/null &&
		kk_journal= && for kk_j in ` + shellQuote(kbDir+"/.state/txn") + `/*.journal; do [ -f "$kk_j" ] && kk_journal=1; break; done && [ -n "$kk_journal" ]; then
		# a commit made while the journal of a kk write is left (the write
		# was killed, and no kk command ran since): the commit may hold
		# files the write had written, which kk rolls back in the work
		# tree before anything else, so that comparing the work tree says
		# nothing of the commit. Its files, from its own notes; then the
		# work tree's
		kk_range='HEAD^!'
		kk_worktree=1
	elif git rev-parse -q --verify HEAD^ >/dev/null 2>&1 &&
		! git diff-tree --quiet HEAD^ HEAD -- ` + shellQuote(kbDir) + ` 2>/dev/null &&
		[ -n "$(git status --porcelain -- ` + shellQuote(kbDir) + ` 2>/dev/null | head -n 1)" ]; then
		# a commit of the knowledge base that left part of it out (a note
		# staged without the files kk generated for it, or those without
		# a note they name): its files, from its own notes; then the work
		# tree's, from its notes (those left out included), as moving
		# HEAD may have checked the commit's out
		kk_range='HEAD^!'
		kk_worktree=1
	elif kk_base=HEAD^ &&
		case "$(git log -g -1 --no-show-signature --format=%gs HEAD 2>/dev/null)" in 'commit (amend):'*) kk_base='HEAD@{1}' ;; esac &&
		git rev-parse -q --verify "$kk_base" >/dev/null 2>&1 &&
		! git diff-tree --quiet "$kk_base" HEAD -- ` + shellQuote(kbDir) + ` 2>/dev/null &&
		kk_found && ! kk_check="` + subst("index rebuild --check --json") + ` 2>/dev/null </dev/null)" &&
		{ git diff-tree -r --quiet "$kk_base" HEAD -- ` + generated + ` 2>/dev/null ||
			[ "$(tr -d '\r' 2>/dev/null <` + shellQuote(kbDir+"/ENTRY.md") + ` | sed -n "s/^nodes_hash: *'\{0,1\}\([^']*\)'\{0,1\} *\$/\1/p" | head -n 1)" != "$(printf '%s\n' "$kk_check" | sed -n 's/^ *"nodes_hash": *"\([^"]*\)".*/\1/p' | head -n 1)" ]; }; then
		# a commit of the knowledge base whose generated files lag its
		# notes (kk index rebuild --check; the work tree is the commit
		# here): notes edited in an editor or removed with git rm and
		# committed without them, a note touched up by hand after kk
		# wrote it (ENTRY.md's nodes_hash names other notes), a summary
		# added to FOLDER_SUMMARIES.md. Its files, from its own notes;
		# the work tree follows. git commit --amend is compared with the
		# commit it replaced. A commit whose generated files name its
		# notes and differ from what kk generates holds a person's words
		# in them, and is left as it is.
		kk_range='HEAD^!'
		git rev-parse -q --verify HEAD^ >/dev/null 2>&1 || kk_range=HEAD
	elif ! git rev-parse -q --verify HEAD^ >/dev/null 2>&1 &&
		[ -n "$(git ls-tree HEAD -- ` + shellQuote(kbDir) + ` 2>/dev/null)" ] &&
		[ -n "$(git status --porcelain -- ` + shellQuote(kbDir) + ` 2>/dev/null | head -n 1)" ]; then
		# the same, for a root commit (the first of a repository or of
		# an orphan branch) holding a knowledge base
		kk_range=HEAD
		kk_worktree=1
	fi
	if [ -n "$kk_range" ]; then
		` + kk(`index rebuild --commits "$kk_range"`) + `
		if [ -n "${kk_worktree-}" ]; then
			` + kk(`index rebuild`) + `
		fi
	fi
`)
		b.WriteString("fi\n")
	case PostApplypatch:
		b.WriteString("if " + cond + "; then\n")
		b.WriteString(`	kk_git_dir="$(git rev-parse --git-dir 2>/dev/null)"
	# git am's last patch (not a rebase's: post-rewrite regenerates its
	# commits when it ends): every commit it made, from ORIG_HEAD, where it
	# started
	if [ -n "$kk_git_dir" ] && [ ! -e "$kk_git_dir/rebase-apply/rebasing" ] &&
		[ "$(cat "$kk_git_dir/rebase-apply/next" 2>/dev/null)" = "$(cat "$kk_git_dir/rebase-apply/last" 2>/dev/null)" ] &&
		git rev-parse -q --verify ORIG_HEAD >/dev/null 2>&1; then
		` + kk(`index rebuild --commits ORIG_HEAD..HEAD`) + `
	fi
`)
		b.WriteString("fi\n")
	case PostRewrite:
		b.WriteString("if [ \"${1-}\" = rebase ] && " + cond + "; then\n")
		b.WriteString(`	kk_git_dir="$(git rev-parse --git-dir 2>/dev/null)"
	kk_onto="$(cat "$kk_git_dir/rebase-merge/onto" 2>/dev/null || cat "$kk_git_dir/rebase-apply/onto" 2>/dev/null)"
	if [ -n "$kk_onto" ]; then
		` + kk(`index rebuild --commits "$kk_onto..HEAD"`) + `
	fi
	if [ -f "$kk_git_dir/rebase-merge/autostash" ] || [ -f "$kk_git_dir/rebase-apply/autostash" ]; then
		` + writeMark + `
	fi
`)
		b.WriteString("fi\n")
	}
	b.WriteString("exit \"$kk_status\"\n")
	return b.Bytes()
}

// hookPurpose says what each of kk's hooks does, for its comment.
var hookPurpose = map[string]string{
	PostCheckout:    "After a branch checkout (third argument 1) it\n# brings kk's search index of the new branch up to date with `kk sync`,\n# in the background and with its output discarded.",
	PostMerge:       "After a merge (git pull's included) it\n# regenerates the index files of a merge commit from its leaves (kk's merge\n# driver kept one side of them), or, after git merge --squash, stages them\n# for the commit to come; then it brings kk's search index up to date with\n# `kk sync` in the background.",
	PostApplypatch:  "When git am made its last commit, it\n# regenerates the index files of the commits it made from their own leaves\n# (kk index rebuild --commits), so that each commit's generated files\n# match its leaves.",
	PostCommit:      "When a cherry-pick or a revert made its last\n# commit, or a merge was concluded with git commit, or a commit changed the\n# knowledge base and left part of it in the work tree (a note staged without\n# its generated files, or the reverse), or whose generated files lag its notes\n# (a note edited by hand, git rm, a summary added), it regenerates the index\n# files of the commits made from their own leaves (kk index rebuild --commits), so that\n# each commit's generated files match its leaves.",
	PostRewrite:     "When a rebase ends (git pull --rebase's\n# included) it regenerates the index files of each rebased commit from its\n# own leaves (kk index rebuild --commits), so that every commit's generated\n# files match its leaves.",
	PostIndexChange: "After git applied the autostash of a rebase or a\n# merge (--autostash, rebase.autoStash), which kk's post-rewrite, post-merge\n# or post-checkout hook marked, or after git stash apply/pop, a checkout\n# with --merge, or git cherry-pick/revert --no-commit in which kk's merge\n# driver kept one side of a generated file, it regenerates the work tree's\n# index files from its leaves (kk index rebuild; --stage after a pick or a\n# revert, or after a merge that git stopped on conflicts in generated files\n# only); otherwise it does nothing.",
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isKK reports whether data is a hook kk wrote.
func isKK(data []byte) bool {
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(line, markerPrefix) {
			return true
		}
		if line != "" && !strings.HasPrefix(line, "#") {
			return false // the marker sits in the leading comment block
		}
	}
	return false
}

// executable reports whether git would run the file described by fi.
// Windows has no executable bit: git runs every hook there.
func executable(fi fs.FileInfo) bool {
	return runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0
}

// hookState is what one hook path holds.
type hookState struct {
	path, chained string
	exists        bool
	kk            bool // the file is one of kk's hooks
	regular       bool // a regular file (not a symbolic link or folder)
	exec          bool
	data          []byte
	chainExists   bool
}

func inspect(dir, name string) (hookState, error) {
	s := hookState{path: filepath.Join(dir, name), chained: filepath.Join(dir, name+ChainSuffix)}
	if _, err := os.Lstat(s.chained); err == nil {
		s.chainExists = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return s, fmt.Errorf("reading %s: %w", s.chained, err)
	}
	lfi, err := os.Lstat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("reading %s: %w", s.path, err)
	}
	s.exists = true
	s.regular = lfi.Mode().IsRegular()
	fi, err := os.Stat(s.path) // through a symbolic link
	if err != nil || fi.IsDir() {
		return s, nil // a dangling link or a folder: not kk's
	}
	s.exec = executable(fi)
	if s.data, err = os.ReadFile(s.path); err != nil {
		return s, fmt.Errorf("reading %s: %w", s.path, err)
	}
	s.kk = isKK(s.data)
	return s, nil
}

// rewritten reports whether the hook in place, not kk's, is a regular
// file holding the same bytes as the hook kk chained before: what a hook
// manager's install (husky's) does when it writes its hooks again over
// kk's. kk's hook can go back in place, since the chained copy runs it.
func (s hookState) rewritten() bool {
	if !s.exists || s.kk || !s.regular || !s.chainExists {
		return false
	}
	fi, err := os.Lstat(s.chained)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(s.data)) {
		return false
	}
	chained, err := os.ReadFile(s.chained)
	return err == nil && bytes.Equal(chained, s.data)
}

// setUpMergeDrivers defines kk's merge drivers in the repository's git
// config and turns kk's hooks on, recording a change of the config in res.
func (r *repo) setUpMergeDrivers(ctx context.Context, res *Result) error {
	changed, err := SetUpMergeDriver(ctx, r.k)
	if err != nil {
		return fmt.Errorf("setting up kk's merge driver: %w", err)
	}
	if err := turnOn(ctx, r.k.Root); err != nil {
		return err
	}
	if changed {
		cfg, err := gitPath(ctx, r.k.Root, "config")
		if err != nil {
			return err
		}
		res.Changes = append(res.Changes, Change{Path: r.show(cfg), Action: "updated"})
	}
	return nil
}

// Install puts kk's hooks into the hooks folder git uses for k's
// repository. It returns ErrNotWorkTree (or gitx.ErrNoGit) when there is
// no such folder. A hook already there that is not kk's is chained; one
// that cannot be (its .kk-chained name is taken) is left alone with a
// warning. Running it again changes nothing.
func Install(ctx context.Context, k *store.KB, o Options) (*Result, error) {
	r, err := open(ctx, k)
	if err != nil {
		return nil, err
	}
	res := &Result{Dir: r.show(r.dir), Changes: []Change{}, Warnings: []string{}}
	if why, fix := r.noHooksFix(); why != "" {
		why += "; " + fix
		// git runs no hooks here, on purpose: the merge drivers, which
		// are git config, still keep merges from stopping on the
		// generated files.
		res.NoHooks = why
		res.Warnings = append(res.Warnings, why)
		if err := r.setUpMergeDrivers(ctx, res); err != nil {
			return res, err
		}
		if msg, fix := mergeOverride(ctx, k); msg != "" {
			res.Warnings = append(res.Warnings, msg+"; "+fix)
		}
		return res, nil
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return res, fmt.Errorf("creating the git hooks folder: %w", err)
	}
	for _, name := range Names {
		if err := r.install(name, o, res); err != nil {
			return res, err
		}
	}
	if err := r.setUpMergeDrivers(ctx, res); err != nil {
		return res, err
	}
	if msg, fix := mergeOverride(ctx, k); msg != "" {
		res.Warnings = append(res.Warnings, msg+"; "+fix)
	}
	if w := r.trackedFolder(ctx, res); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	if !sameDir(r.dir, r.defaultDir) {
		if stale := r.kkHooksIn(r.defaultDir); len(stale) > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("kk's hooks in %s are never run: git runs hooks from %s (core.hooksPath); `kk uninstall --git-hooks` removes the old ones", r.show(r.defaultDir), r.show(r.dir)))
		}
	}
	return res, nil
}

// trackedFolder says, when Install changed hooks in a folder of the work
// tree that git does not ignore (core.hooksPath set to a folder the team
// commits, .githooks say), that kk's hooks there are to be committed: left
// out, the folder stays modified and the next git pull that changes one of
// the team's hooks stops on it. "" otherwise: no hook changed, the folder
// is inside the git folder, or git ignores it (husky 9's .husky/_).
func (r *repo) trackedFolder(ctx context.Context, res *Result) string {
	if r.hooksPath == "" || len(res.Changes) == 0 {
		return ""
	}
	var changed string // a hook Install changed, relative to the top
	top, err := gitx.TopLevel(ctx, r.k.Root)
	if err != nil {
		return ""
	}
	gitDir := filepath.Dir(r.defaultDir)
	for _, c := range res.Changes {
		p := filepath.FromSlash(c.Path)
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.k.Root, p)
		}
		if !sameDir(filepath.Dir(p), r.dir) {
			continue
		}
		if _, err := relPath(gitDir, p); err == nil {
			return "" // inside the git folder
		}
		if changed, err = relPath(top, p); err != nil {
			return ""
		}
		break
	}
	if changed == "" {
		return ""
	}
	if out, err := gitx.Read(ctx, top, "check-ignore", "--", changed); err == nil && len(bytes.TrimSpace(out)) > 0 {
		return ""
	}
	dir := r.show(r.dir)
	return fmt.Sprintf("git runs hooks from %s (core.hooksPath), a folder of the work tree that git does not ignore: commit kk's hooks there with %s (git add %s), so that every clone runs them (a clone without kk is told what to run), or the folder stays changed and a git pull that changes one of its hooks stops on it", dir, r.k.Rel(r.k.Dir), dir)
}

func (r *repo) install(name string, o Options, res *Result) error {
	s, err := inspect(r.dir, name)
	if err != nil {
		return err
	}
	want := script(name, r.command, r.rel)
	switch {
	case !s.exists:
		if err := atomicfile.Write(s.path, want, 0o755); err != nil {
			return err
		}
		res.Changes = append(res.Changes, Change{Path: r.show(s.path), Action: "created"})
	case s.kk:
		if !o.Upgrade || (bytes.Equal(s.data, want) && s.exec) {
			return nil
		}
		if !s.regular {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s is a link to one of kk's hooks; left as it is", r.show(s.path)))
			return nil
		}
		if err := atomicfile.Write(s.path, want, 0o755); err != nil {
			return err
		}
		if err := os.Chmod(s.path, 0o755); err != nil {
			return fmt.Errorf("making %s executable: %w", s.path, err)
		}
		res.Changes = append(res.Changes, Change{Path: r.show(s.path), Action: "updated"})
	case s.chainExists && s.rewritten():
		// A hook manager's install (husky's, on npm install) wrote its
		// hook again over kk's: the chained copy keeps it already.
		if err := atomicfile.Write(s.path, want, 0o755); err != nil {
			return err
		}
		if err := os.Chmod(s.path, 0o755); err != nil {
			return fmt.Errorf("making %s executable: %w", s.path, err)
		}
		res.Changes = append(res.Changes, Change{Path: r.show(s.path), Action: "updated"})
	case s.chainExists:
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s is not kk's hook and %s exists too, so kk cannot chain it; move one of them away and run `kk init` again", r.show(s.path), r.show(s.chained)))
	default:
		if err := os.Rename(s.path, s.chained); err != nil {
			return fmt.Errorf("moving the existing hook aside: %w", err)
		}
		if err := atomicfile.Write(s.path, want, 0o755); err != nil {
			if rerr := os.Rename(s.chained, s.path); rerr != nil {
				return fmt.Errorf("%w (and putting the existing hook back failed: %v; it is at %s)", err, rerr, s.chained)
			}
			return err
		}
		res.Changes = append(res.Changes,
			Change{Path: r.show(s.path), Action: "updated"},
			Change{Path: r.show(s.chained), Action: "created"})
	}
	return nil
}

// kkHooksIn lists the hooks of kk's found in dir.
func (r *repo) kkHooksIn(dir string) []string {
	var out []string
	for _, name := range Names {
		if s, err := inspect(dir, name); err == nil && s.kk {
			out = append(out, name)
		}
	}
	return out
}

// Uninstall removes kk's hooks from the hooks folder git uses and, when
// core.hooksPath points elsewhere, from $GIT_COMMON_DIR/hooks too. A
// chained hook is moved back into place. A hook that is not kk's is left
// alone.
func Uninstall(ctx context.Context, k *store.KB) (*Result, error) {
	r, err := open(ctx, k)
	if err != nil {
		return nil, err
	}
	res := &Result{Dir: r.show(r.dir), Changes: []Change{}, Warnings: []string{}}
	dirs := []string{r.dir}
	if r.noHooks() != "" {
		dirs = nil // not a folder: no hook of kk's in it
	}
	if !sameDir(r.dir, r.defaultDir) {
		dirs = append(dirs, r.defaultDir)
	}
	for _, dir := range dirs {
		for _, name := range Names {
			if err := r.uninstall(dir, name, res); err != nil {
				return res, err
			}
		}
	}
	// Kept off: a later write does not set them up again (SetUpClone).
	if err := turnOff(ctx, r.k.Root); err != nil {
		return res, err
	}
	// Without the hooks, the merge driver would leave generated files
	// behind their leaves without a word: git's own merge comes back.
	if top, err := gitx.TopLevel(ctx, k.Root); err == nil && mergeDriverDefined(ctx, top) {
		if _, err := gitx.Run(ctx, top, "config", "--remove-section", "merge."+MergeDriver); err != nil {
			return res, err
		}
		for _, d := range []string{RedirectsDriver, SummariesDriver} {
			if driverDefined(ctx, top, d) {
				if _, err := gitx.Run(ctx, top, "config", "--remove-section", "merge."+d); err != nil {
					return res, err
				}
			}
		}
		if cfg, err := gitPath(ctx, k.Root, "config"); err == nil {
			res.Changes = append(res.Changes, Change{Path: r.show(cfg), Action: "updated"})
		}
	}
	return res, nil
}

func (r *repo) uninstall(dir, name string, res *Result) error {
	s, err := inspect(dir, name)
	if err != nil {
		return err
	}
	switch {
	case s.exists && !s.kk:
		if s.chainExists {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s is not kk's hook, so %s was not put back; merge them by hand", r.show(s.path), r.show(s.chained)))
		}
	case s.chainExists: // kk's hook (or none) with the user's hook beside it
		if err := os.Rename(s.chained, s.path); err != nil {
			return fmt.Errorf("putting back %s: %w", s.chained, err)
		}
		action := "updated"
		if !s.exists {
			action = "created"
		}
		res.Changes = append(res.Changes,
			Change{Path: r.show(s.path), Action: action},
			Change{Path: r.show(s.chained), Action: "removed"})
	case s.exists:
		if err := os.Remove(s.path); err != nil {
			return fmt.Errorf("removing %s: %w", s.path, err)
		}
		res.Changes = append(res.Changes, Change{Path: r.show(s.path), Action: "removed"})
	}
	return nil
}
