package githooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/store"
)

// Doctor checks kk's git hooks in k's repository:
//
//   - git-hooks: both hooks are in the folder git runs hooks from, are
//     executable (git silently skips a hook without the executable bit,
//     which is an error) and match what this kk writes. Missing or out of
//     date hooks are warnings: without them indexes are synced when a
//     command first uses them.
//   - git-hooks-folder, only when core.hooksPath moves the folder: a warning
//     when kk's hooks sit in $GIT_COMMON_DIR/hooks, where git no longer
//     looks.
//
// Without git, or outside a git work tree, there is nothing to check and
// Doctor returns no checks.
func Doctor(ctx context.Context, k *store.KB) []checks.DoctorCheck {
	r, err := open(ctx, k)
	if errors.Is(err, gitx.ErrNoGit) || errors.Is(err, ErrNotWorkTree) {
		return nil
	}
	if err != nil {
		return []checks.DoctorCheck{{Name: "git-hooks", Level: checks.DoctorWarn, Message: "cannot check kk's git hooks: " + err.Error(), Fix: "run `git rev-parse --git-path hooks` to see what git reports"}}
	}
	out := []checks.DoctorCheck{r.checkHooks(), r.checkMergeDriver(ctx)}
	if !sameDir(r.dir, r.defaultDir) && r.noHooks() == "" {
		out = append(out, r.checkFolder())
	}
	return out
}

func (r *repo) checkHooks() checks.DoctorCheck {
	if why, fix := r.noHooksFix(); why != "" {
		return checks.DoctorCheck{Name: "git-hooks", Level: checks.DoctorWarn, Message: why, Fix: fix}
	}
	var missing, noExec, noExecPaths, outdated, details []string
	for _, name := range Names {
		s, err := inspect(r.dir, name)
		switch {
		case err != nil:
			missing = append(missing, name)
			details = append(details, err.Error())
		case !s.kk:
			missing = append(missing, name)
			switch {
			case s.rewritten():
				details = append(details, fmt.Sprintf("%s is the hook kept as %s, written again (by a hook manager's install); kk init puts kk's back", r.show(s.path), r.show(s.chained)))
			case s.exists && s.chainExists:
				details = append(details, fmt.Sprintf("%s is not kk's and %s exists too, so kk cannot chain it: move one of them away", r.show(s.path), r.show(s.chained)))
			case s.exists:
				details = append(details, fmt.Sprintf("%s is not kk's; kk init keeps it and runs it first", r.show(s.path)))
			}
		case !s.exec:
			noExec = append(noExec, name)
			noExecPaths = append(noExecPaths, shellQuote(s.path))
			details = append(details, fmt.Sprintf("%s is not executable, so git skips it", r.show(s.path)))
		case !bytes.Equal(s.data, script(name, r.command, r.rel)):
			outdated = append(outdated, name)
			details = append(details, fmt.Sprintf("%s differs from what this kk writes", r.show(s.path)))
		case s.chainExists:
			details = append(details, fmt.Sprintf("%s runs %s first", r.show(s.path), r.show(s.chained)))
		}
	}
	c := checks.DoctorCheck{Name: "git-hooks", Level: checks.DoctorOK, Details: details}
	var fixes []string
	if len(noExec) > 0 {
		fixes = append(fixes, "chmod +x "+strings.Join(noExecPaths, " "))
	}
	if len(missing) > 0 {
		fixes = append(fixes, "run `kk init` to install them (a hook already there is kept and runs first)")
	}
	if len(outdated) > 0 {
		fixes = append(fixes, "run `kk init --upgrade`")
	}
	c.Fix = strings.Join(fixes, "; ")
	where := r.show(r.dir)
	switch {
	case len(noExec) > 0:
		c.Level = checks.DoctorError
		c.Message = fmt.Sprintf("git ignores kk's %s hook(s) in %s: not executable", strings.Join(noExec, ", "), where)
	case len(missing) > 0:
		c.Level = checks.DoctorWarn
		c.Message = fmt.Sprintf("kk's %s hook(s) are not installed in %s: branch indexes are synced only when a command uses them, and the generated files of merged, rebased or cherry-picked commits are not regenerated", strings.Join(missing, ", "), where)
	case len(outdated) > 0:
		c.Level = checks.DoctorWarn
		c.Message = fmt.Sprintf("kk's %s hook(s) in %s are out of date", strings.Join(outdated, ", "), where)
	default:
		c.Message = fmt.Sprintf("%s in %s keep the search index and the generated files in step", strings.Join(Names, ", "), where)
	}
	return c
}

func (r *repo) checkFolder() checks.DoctorCheck {
	c := checks.DoctorCheck{Name: "git-hooks-folder", Level: checks.DoctorOK}
	why := "core.hooksPath"
	if r.hooksPath != "" {
		why = fmt.Sprintf("core.hooksPath is %s", r.hooksPath)
	}
	c.Message = fmt.Sprintf("git runs hooks from %s (%s)", r.show(r.dir), why)
	if stale := r.kkHooksIn(r.defaultDir); len(stale) > 0 {
		c.Level = checks.DoctorWarn
		c.Message = fmt.Sprintf("kk's %s hook(s) in %s are never run: git runs hooks from %s (%s)", strings.Join(stale, ", "), r.show(r.defaultDir), r.show(r.dir), why)
		c.Fix = "run `kk uninstall --git-hooks` (it cleans both folders), then `kk init`"
	}
	return c
}

// checkMergeDriver checks that merges of the generated files go through
// kk's merge driver: .ai/kenkeep/.gitattributes names it and the
// repository's git config defines it. Either missing is a warning: merges
// then stop on conflicts in ENTRY.md, GRAPH.md and index.md files.
func (r *repo) checkMergeDriver(ctx context.Context) checks.DoctorCheck {
	c := checks.DoctorCheck{Name: "git-merge-driver", Level: checks.DoctorOK}
	var missing []string
	if !store.HasGitattributes(r.k) {
		missing = append(missing, fmt.Sprintf("%s does not send the generated files to the driver %s", r.k.Rel(r.k.GitattributesPath()), MergeDriver))
	}
	top, err := gitx.TopLevel(ctx, r.k.Root)
	if err != nil || !mergeDriverDefined(ctx, top) {
		missing = append(missing, fmt.Sprintf("the repository's git config does not define merge.%s.driver", MergeDriver))
	}
	var lines []string // kk's other lines the file lacks, and what that costs
	if !store.HasGitattributesLine(r.k, store.GitattributesSummaries) {
		lines = append(lines, fmt.Sprintf("%s lacks %q: a merge of two branches that each summarized a new folder stops on a conflict in FOLDER_SUMMARIES.md, or loses a summary", r.k.Rel(r.k.GitattributesPath()), store.GitattributesSummaries))
	}
	if !store.HasGitattributesLine(r.k, store.GitattributesRedirects) {
		lines = append(lines, fmt.Sprintf("%s lacks %q: a merge of two branches that each split a leaf stops on a conflict in nodes/.redirects.json", r.k.Rel(r.k.GitattributesPath()), store.GitattributesRedirects))
	}
	if !store.HasGitattributesLine(r.k, store.GitattributesInstalled) {
		lines = append(lines, fmt.Sprintf("%s lacks %q: a merge of two branches on which kk was installed into different coding agents stops on a conflict in .state/installed-version", r.k.Rel(r.k.GitattributesPath()), store.GitattributesInstalled))
	}
	if !store.HasGitattributesLine(r.k, store.GitattributesSelf) {
		lines = append(lines, fmt.Sprintf("%s lacks %q: a merge of a branch where kk added a line to it (an upgrade) with one where a person added a line stops on a conflict in it", r.k.Rel(r.k.GitattributesPath()), store.GitattributesSelf))
	}
	if err == nil && !driverDefined(ctx, top, InstalledDriver) {
		lines = append(lines, fmt.Sprintf("the repository's git config does not define merge.%s.driver: a merge of two branches on which kk was installed into different coding agents stops on a conflict in .state/installed-version", InstalledDriver))
	}
	if err == nil && !redirectsDriverDefined(ctx, top) {
		lines = append(lines, fmt.Sprintf("the repository's git config does not define merge.%s.driver: a merge of two branches that each split a leaf stops on a conflict in nodes/.redirects.json", RedirectsDriver))
	}
	if err == nil && olderMergeDriver(ctx, top) {
		lines = append(lines, fmt.Sprintf("the repository's git config holds an older kk's merge.%s.driver, which keeps our side of a generated file whatever theirs held: a merge loses the other branch's summary in ENTRY.md's front matter, or a note a person named index.md there", MergeDriver))
	}
	if err == nil && !driverDefined(ctx, top, SummariesDriver) {
		lines = append(lines, fmt.Sprintf("the repository's git config does not define merge.%s.driver: a merge of two branches that each summarized a new folder stops on a conflict in FOLDER_SUMMARIES.md", SummariesDriver))
	} else if err == nil && olderSummariesDriver(ctx, top) {
		lines = append(lines, fmt.Sprintf("the repository's git config holds an older kk's merge.%s.driver, which falls back to git's union merge: a merge of two branches that both changed one folder's summary commits FOLDER_SUMMARIES.md naming the folder twice, which no kk command can read, instead of stopping on a conflict", SummariesDriver))
	}
	if len(missing) == 0 {
		if msg, fix := mergeOverride(ctx, r.k); msg != "" {
			c.Level, c.Message, c.Details, c.Fix = checks.DoctorWarn, msg, lines, fix
			return c
		}
		if len(lines) > 0 {
			c.Level, c.Message = checks.DoctorWarn, lines[0]
			if len(lines) > 1 {
				c.Message = fmt.Sprintf("%s lacks %d of kk's lines", r.k.Rel(r.k.GitattributesPath()), len(lines))
				c.Details = lines
			}
			c.Fix = "run `kk doctor --fix` (or `kk init`), which adds the lines and defines the drivers"
			return c
		}
		c.Message = "merges of ENTRY.md, GRAPH.md and index.md files go through kk's merge driver " + MergeDriver + ", FOLDER_SUMMARIES.md through " + SummariesDriver + ", nodes/.redirects.json through " + RedirectsDriver + " and .state/installed-version through " + InstalledDriver
		return c
	}
	missing = append(missing, lines...)
	c.Level, c.Details = checks.DoctorWarn, missing
	c.Message = "merges and rebases of branches that both changed the knowledge base stop on conflicts in the generated files"
	c.Fix = "run `kk doctor --fix` (or `kk init`), which sets up the merge driver"
	return c
}

// olderMergeDriver reports whether the repository's git config defines
// kk's driver of the generated files as an older kk did, keeping our side
// without running kk.
func olderMergeDriver(ctx context.Context, top string) bool {
	cur, err := gitx.Run(ctx, top, "config", "--get", "merge."+MergeDriver+".driver")
	return err == nil && strings.HasSuffix(strings.TrimSpace(string(cur)), olderMergeDriverSuffix)
}

// olderSummariesDriver reports whether the repository's git config defines
// kk's driver of FOLDER_SUMMARIES.md as an older kk did, falling back to
// git's union merge.
func olderSummariesDriver(ctx context.Context, top string) bool {
	cur, err := gitx.Run(ctx, top, "config", "--get", "merge."+SummariesDriver+".driver")
	return err == nil && strings.HasSuffix(strings.TrimSpace(string(cur)), oldSummariesDriverSuffix)
}

// mergeOverride says, when git's attributes send any of the files kk's
// merge drivers merge to another driver, which files, the driver git uses
// instead, and what to do ("" when every one goes to kk's): a line in
// $GIT_DIR/info/attributes (which outranks every .gitattributes file, so
// that a person's `*.md merge=binary` there takes ENTRY.md from kk's
// driver) or in a .gitattributes file nearer the file does it.
func mergeOverride(ctx context.Context, k *store.KB) (msg, fix string) {
	if !store.HasGitattributes(k) {
		return "", "" // reported as the lines kk's .gitattributes lacks
	}
	want := []struct{ path, driver string }{
		{k.EntryPath(), MergeDriver},
		{k.GraphPath(), MergeDriver},
		{k.NodePath("index.md"), MergeDriver},
		{k.SummariesPath(), SummariesDriver},
		{k.RedirectsPath(), RedirectsDriver},
		{k.InstalledPath(), InstalledDriver},
	}
	args := []string{"check-attr", "-z", "merge", "--"}
	for _, w := range want {
		args = append(args, k.Rel(w.path))
	}
	out, err := gitx.Read(ctx, k.Root, args...)
	if err != nil {
		return "", ""
	}
	// -z prints path NUL attribute NUL value NUL for each path, in order.
	fields := strings.Split(string(out), "\x00")
	if len(fields) < 3*len(want) {
		return "", ""
	}
	var drivers []string // in the order first met
	byDriver := map[string][]string{}
	for i, w := range want {
		got := fields[3*i+2]
		if got == w.driver {
			continue
		}
		switch got {
		case "unset":
			got = "none (merge is unset, as for a binary file)"
		case "set", "unspecified":
			got = "git's own text merge"
		default:
			got = "the merge driver " + got
		}
		if _, seen := byDriver[got]; !seen {
			drivers = append(drivers, got)
		}
		byDriver[got] = append(byDriver[got], k.Rel(w.path))
	}
	if len(drivers) == 0 {
		return "", ""
	}
	parts := make([]string, len(drivers))
	for i, d := range drivers {
		parts[i] = strings.Join(byDriver[d], ", ") + " to " + d
	}
	msg = "git's attributes send " + strings.Join(parts, "; ") + ", not kk's: a merge of two branches that both changed the knowledge base stops on conflicts in them"
	info := "$GIT_DIR/info/attributes"
	if top, err := gitx.TopLevel(ctx, k.Root); err == nil {
		if p, err := gitPath(ctx, top, "info/attributes"); err == nil {
			info = k.Rel(p)
		}
	}
	fix = "remove or narrow the line that sets merge for them in " + info + " (it outranks " + k.Rel(k.GitattributesPath()) + "), or in a .gitattributes file nearer them; `git check-attr merge -- " + byDriver[drivers[0]][0] + "` shows what git uses"
	return msg, fix
}
