package gitx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The git side of a queue worker (kk serve): one commit per job that
// touches only that job's paths, the commit that holds a job id, undoing a
// job's paths, and sharing the branch with a remote. Paths are relative to
// the repository root and use "/"; they are passed to git as literal
// pathspecs, so "*" or ":" in a name mean nothing special.

// Author is the fixed identity of the commits a worker makes.
type Author struct {
	Name  string
	Email string
}

func (a Author) env() []string {
	return []string{
		"GIT_AUTHOR_NAME=" + a.Name, "GIT_AUTHOR_EMAIL=" + a.Email,
		"GIT_COMMITTER_NAME=" + a.Name, "GIT_COMMITTER_EMAIL=" + a.Email,
	}
}

// literal runs git with literal pathspecs and no signing, hooks or editor:
// a worker's commits never wait for a person.
func literal(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	full := append([]string{"--literal-pathspecs", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"}, args...)
	return run(ctx, dir, env, full)
}

// CommitPaths commits the current state of paths in dir's repository,
// and nothing else, as author with message: a path that exists is added, a
// path that no longer exists is removed, and whatever else is staged in
// the index stays staged and out of the commit. It commits even when the
// paths did not change (the commit is the record that the job ran).
// It returns the new commit's hash.
func CommitPaths(ctx context.Context, dir string, author Author, message string, paths []string) (string, error) {
	if author.Name == "" || author.Email == "" {
		return "", errors.New("commit author needs a name and an email")
	}
	if strings.TrimSpace(message) == "" {
		return "", errors.New("commit message is empty")
	}
	paths = cleanPaths(paths)
	present, err := knownPaths(ctx, dir, paths)
	if err != nil {
		return "", err
	}
	if len(present) > 0 {
		if _, err := literal(ctx, dir, nil, append([]string{"add", "-A", "--"}, present...)...); err != nil {
			return "", err
		}
	}
	args := []string{"commit", "-q", "--no-verify", "--allow-empty", "--cleanup=verbatim", "-m", message}
	if len(present) > 0 {
		args = append(append(args, "--only", "--"), present...)
	} else {
		// --only with no paths would commit the whole index.
		args = append(args, "--only")
	}
	if _, err := literal(ctx, dir, author.env(), args...); err != nil {
		return "", err
	}
	out, err := Read(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// knownPaths returns the paths git can commit: those on disk, and those
// it tracks (in the index), which a deletion commits. A path that is
// neither has nothing to commit.
func knownPaths(ctx context.Context, dir string, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	tracked, err := trackedIn(ctx, dir, "", paths)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); err == nil || tracked[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// trackedIn returns which of paths are files in the index (tree == "") or
// in tree. An unborn HEAD has no files.
func trackedIn(ctx context.Context, dir, tree string, paths []string) (map[string]bool, error) {
	args := []string{"ls-files", "-z", "--cached", "--"}
	if tree != "" {
		if _, err := Read(ctx, dir, "rev-parse", "-q", "--verify", tree+"^{tree}"); err != nil {
			return map[string]bool{}, nil
		}
		args = []string{"ls-tree", "-r", "-z", "--name-only", "--full-tree", tree, "--"}
	}
	out, err := literal(ctx, dir, []string{"GIT_OPTIONAL_LOCKS=0"}, append(args, paths...)...)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, p := range splitNUL(out) {
		set[p] = true
	}
	return set, nil
}

func cleanPaths(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if p = strings.TrimSpace(filepath.ToSlash(p)); p != "" {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// RestorePaths puts paths back as HEAD has them, in the index and on disk:
// a path HEAD holds is checked out again, and a path it does not hold is
// unstaged and deleted. It undoes what an unfinished job left behind, and
// touches no other path.
func RestorePaths(ctx context.Context, dir string, paths []string) error {
	paths = cleanPaths(paths)
	if len(paths) == 0 {
		return nil
	}
	inHead, err := trackedIn(ctx, dir, "HEAD", paths)
	if err != nil {
		return err
	}
	var keep, drop []string
	for _, p := range paths {
		if inHead[p] {
			keep = append(keep, p)
		} else {
			drop = append(drop, p)
		}
	}
	if len(keep) > 0 {
		if _, err := literal(ctx, dir, nil, append([]string{"checkout", "HEAD", "--"}, keep...)...); err != nil {
			return err
		}
	}
	if len(drop) > 0 {
		if _, err := literal(ctx, dir, nil, append([]string{"rm", "-q", "--cached", "--ignore-unmatch", "-r", "--"}, drop...)...); err != nil {
			return err
		}
		for _, p := range drop {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("removing %s: %w", p, err)
			}
		}
	}
	return nil
}

// TopLevel returns the root folder of the work tree dir is in.
func TopLevel(ctx context.Context, dir string) (string, error) {
	out, err := Read(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// JobCommit is a commit whose subject names a job: "<op>(<id>): <path>".
type JobCommit struct {
	Hash string
	Op   string // store, edit, delete
	ID   string
	Path string
	Time time.Time // committer time
}

// JobSubject is the subject of a job's commit.
func JobSubject(op, id, path string) string { return op + "(" + id + "): " + path }

var jobSubject = regexp.MustCompile(`^([a-z]+)\(([^()\s]+)\): (.+)$`)

// ParseJobSubject reads a subject JobSubject made.
func ParseJobSubject(subject string) (op, id, path string, ok bool) {
	m := jobSubject.FindStringSubmatch(subject)
	if m == nil {
		return "", "", "", false
	}
	return m[1], m[2], m[3], true
}

// logJobs lists the job commits of rev's history that by authored and
// whose message matches grep (a fixed string, or extended regular
// expressions), newest first, at most max (0: all). A commit whose
// subject names a job but whose author is another (a person's commit
// that copies a job's subject, by hand or by a tool) is not listed.
func logJobs(ctx context.Context, dir, rev string, by Author, grep []string, extended bool, max int) ([]JobCommit, error) {
	if by.Name == "" || by.Email == "" {
		return nil, errors.New("the author of the job commits looked for needs a name and an email")
	}
	if _, err := Read(ctx, dir, "rev-parse", "-q", "--verify", rev+"^{commit}"); err != nil {
		return nil, nil // no commits yet
	}
	// git filters by the author too (so that -n counts only by's
	// commits), as recorded in the commit: a .mailmap naming by otherwise
	// would make --author miss every one (git applies it to --author
	// once log.mailmap is on, its default). The exact name and email are
	// compared below.
	args := []string{"log", "--no-use-mailmap", "--format=%H%x00%ct%x00%an%x00%ae%x00%s%x00"}
	author := "<" + by.Email + ">"
	if extended {
		args = append(args, "--extended-regexp")
		author = "<" + regexp.QuoteMeta(by.Email) + ">"
	} else {
		args = append(args, "--fixed-strings")
	}
	args = append(args, "--author="+author)
	for _, g := range grep {
		args = append(args, "--grep="+g)
	}
	if max > 0 {
		args = append(args, "-n", strconv.Itoa(max))
	}
	out, err := Read(ctx, dir, append(args, rev, "--")...)
	if err != nil {
		return nil, err
	}
	var commits []JobCommit
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+4 < len(fields); i += 5 {
		hash := strings.TrimSpace(fields[i])
		if fields[i+2] != by.Name || fields[i+3] != by.Email {
			continue
		}
		op, id, path, ok := ParseJobSubject(fields[i+4])
		if !ok {
			continue
		}
		sec, _ := strconv.ParseInt(fields[i+1], 10, 64)
		commits = append(commits, JobCommit{Hash: hash, Op: op, ID: id, Path: path, Time: time.Unix(sec, 0).UTC()})
	}
	return commits, nil
}

// FindJobCommit returns the commit by made in HEAD's history whose
// subject names job id, and false when there is none.
func FindJobCommit(ctx context.Context, dir, id string, by Author) (JobCommit, bool, error) {
	return FindJobCommitIn(ctx, dir, "HEAD", id, by)
}

// FindJobCommitIn is FindJobCommit in rev's history (kk serve: its
// pinned branch's, whatever is checked out).
func FindJobCommitIn(ctx context.Context, dir, rev, id string, by Author) (JobCommit, bool, error) {
	if id == "" {
		return JobCommit{}, false, errors.New("empty job id")
	}
	commits, err := logJobs(ctx, dir, rev, by, []string{"(" + id + "): "}, false, 0)
	if err != nil {
		return JobCommit{}, false, fmt.Errorf("looking for the commit of job %s: %w", id, err)
	}
	for _, c := range commits {
		if c.ID == id {
			return c, true, nil
		}
	}
	return JobCommit{}, false, nil
}

// RecentJobCommits lists the newest job commits of operation op (such as
// "store") that by made in HEAD's history, newest first, at most n.
func RecentJobCommits(ctx context.Context, dir, op string, by Author, n int) ([]JobCommit, error) {
	if !regexp.MustCompile(`^[a-z]+$`).MatchString(op) {
		return nil, fmt.Errorf("invalid job operation %q", op)
	}
	return logJobs(ctx, dir, "HEAD", by, []string{"^" + op + `\(`}, true, n)
}

// HasRemote reports whether dir's repository has a remote named name.
func HasRemote(ctx context.Context, dir, name string) bool {
	out, err := Read(ctx, dir, "remote")
	if err != nil {
		return false
	}
	return slices.Contains(strings.Fields(string(out)), name)
}

// PullRebase fetches branch from remote and replays the local commits on
// top of it (Fetch, then Rebase). A failed rebase is aborted, leaving the
// branch as it was, and returned as an error. A remote without the
// branch is not an error: there is nothing to rebase onto.
func PullRebase(ctx context.Context, dir, remote, branch, strategy string) error {
	upstream, err := Fetch(ctx, dir, remote, branch)
	if err != nil || upstream == "" {
		return err
	}
	return Rebase(ctx, dir, upstream, strategy)
}

// Fetch fetches branch from remote and returns its remote-tracking ref
// ("refs/remotes/<remote>/<branch>"), "" when the remote has no such
// branch. Stopped by ctx, git fetch ends cleanly (SIGTERM).
func Fetch(ctx context.Context, dir, remote, branch string) (string, error) {
	// --no-auto-maintenance: kk serve runs git gc --auto itself, bounded
	// and beside its jobs; the one git fetch starts would run on after
	// a kill of kk, its lock (objects/maintenance.lock) left behind.
	if _, err := runTracingHooks(ctx, dir, noPrompt(ctx, dir), "fetch", "-q", "--no-auto-maintenance", remote); err != nil {
		return "", sshAdvice(err)
	}
	upstream := "refs/remotes/" + remote + "/" + branch
	if _, err := Read(ctx, dir, "rev-parse", "-q", "--verify", upstream); err != nil {
		return "", nil
	}
	return upstream, nil
}

// Rebase replays the local commits of the branch checked out onto
// upstream. strategy, when not empty, is a merge strategy option for the
// replay ("theirs": where a local commit and upstream change the same
// lines, the local commit's lines win). A rebase is never left halfway
// by choice: it runs until it ends or ctx does (a caller gives a ctx
// that ends only when the rebase must be given up: a filter of the
// person's that hangs in its checkout), and a failed or stopped one is
// aborted (the branch as it was); a rebase whose kk is killed gets
// SIGTERM and is aborted by the next start (RebaseInProgress,
// AbortRebase).
//
// Only its own rebase is aborted: one found in progress onto another
// commit is a person's (git refuses to start a second, "there is
// already a rebase-merge directory": a person's git rebase started
// between the caller's check and this one), and is left to them. Its
// abort, halfway through the person's setting it up, left a rebase
// neither git rebase --continue nor --abort could end, and every kk
// serve job held behind it.
func Rebase(ctx context.Context, dir, upstream, strategy string) error {
	onto, err := Read(ctx, dir, "rev-parse", "-q", "--verify", upstream+"^{commit}")
	if err != nil {
		return fmt.Errorf("reading %s: %w", upstream, err)
	}
	args := []string{"--literal-pathspecs", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", "rebase", "-q", "--autostash"}
	if strategy != "" {
		args = append(args, "--strategy-option="+strategy)
	}
	if _, err := runInput(ctx, dir, nil, nil, true, append(args, upstream)); err != nil {
		gitDir, gerr := Read(context.WithoutCancel(ctx), dir, "rev-parse", "--absolute-git-dir")
		if gerr != nil {
			return fmt.Errorf("%w (and finding the git folder to abort the rebase failed: %v)", err, gerr)
		}
		switch theirs := RebaseOnto(strings.TrimSpace(string(gitDir))); {
		case theirs == "":
			return err // none left in progress
		case strings.Contains(err.Error(), "It seems that there is already a rebase-"),
			theirs != "?" && theirs != strings.TrimSpace(string(onto)):
			return fmt.Errorf("%w (a rebase kk did not start is in progress, onto %s: it is left as it is)", err, theirs)
		}
		if abortErr := AbortRebase(ctx, dir); abortErr != nil {
			return fmt.Errorf("%w (and aborting the rebase failed: %v)", err, abortErr)
		}
		return err
	}
	return nil
}

// RebaseOnto returns the commit the rebase in progress in gitDir
// replays onto (git's rebase-merge/onto or rebase-apply/onto), "" when
// none is in progress, and "?" when one is whose onto cannot be read
// yet (a rebase being set up).
func RebaseOnto(gitDir string) string {
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		if _, err := os.Stat(filepath.Join(gitDir, d)); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(gitDir, d, "onto"))
		if onto := strings.TrimSpace(string(data)); err == nil && onto != "" {
			return onto
		}
		return "?"
	}
	return ""
}

// StagedEntries returns the git index's entries of the paths a person
// staged (whose index entry differs from HEAD's), as `git update-index
// -z --index-info` reads them: "<mode> <object> 0\t<path>\x00", mode 0
// (with a zero object name) for a path staged as removed. A rebase's
// --autostash gives a stash back with `git stash apply`, which puts back
// the work tree alone: the staged changes come back unstaged, and a
// version staged and then edited further is gone from the index.
// RestoreEntries puts them back. Unmerged entries are left out (git
// refuses to stash them anyway). nil when nothing is staged.
func StagedEntries(ctx context.Context, dir string) ([]byte, error) {
	out, err := Read(ctx, dir, "diff", "--cached", "--name-only", "-z", "--no-renames", "HEAD")
	if err != nil {
		return nil, fmt.Errorf("listing the staged changes: %w", err)
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return nil, nil
	}
	ls, err := Read(ctx, dir, append([]string{"--literal-pathspecs", "ls-files", "-s", "-z", "--"}, paths...)...)
	if err != nil {
		return nil, fmt.Errorf("reading the staged entries: %w", err)
	}
	var info []byte
	present, zero := map[string]bool{}, ""
	for _, rec := range strings.Split(string(ls), "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			continue
		}
		present[path] = true
		if zero == "" {
			zero = strings.Repeat("0", len(f[1]))
		}
		if f[2] != "0" {
			continue // unmerged
		}
		info = append(info, f[0]+" "+f[1]+"\t"+path+"\x00"...)
	}
	for _, p := range paths {
		if present[p] {
			continue
		}
		if zero == "" {
			head, err := Read(ctx, dir, "rev-parse", "HEAD")
			if err != nil {
				return nil, fmt.Errorf("reading HEAD: %w", err)
			}
			zero = strings.Repeat("0", len(strings.TrimSpace(string(head))))
		}
		info = append(info, "0 "+zero+"\t"+p+"\x00"...)
	}
	return info, nil
}

// RestoreEntries puts the index entries StagedEntries returned back in
// the git index, the work tree untouched.
func RestoreEntries(ctx context.Context, dir string, entries []byte) error {
	if len(entries) == 0 {
		return nil
	}
	if _, err := runInput(ctx, dir, nil, entries, true, []string{"update-index", "-z", "--index-info"}); err != nil {
		return fmt.Errorf("putting back the staged changes in git's index: %w", err)
	}
	return nil
}

// InTheRebasesWay lists the paths, relative to the work tree's top, that
// hold changes not committed (staged, or in the work tree) and that
// upstream changed since its merge base with HEAD: a rebase onto upstream
// with --autostash would stash them, and its pop could conflict, leaving
// the person's file with conflict markers, the index unmerged and the
// changes in a stash.
func InTheRebasesWay(ctx context.Context, dir, upstream string) ([]string, error) {
	mine := map[string]bool{}
	for _, args := range [][]string{
		{"diff", "--name-only", "-z", "--no-renames", "HEAD"},
		{"diff", "--name-only", "-z", "--no-renames", "--cached", "HEAD"},
	} {
		out, err := Read(ctx, dir, args...)
		if err != nil {
			return nil, err
		}
		for _, p := range strings.Split(string(out), "\x00") {
			if p != "" {
				mine[p] = true
			}
		}
	}
	if len(mine) == 0 {
		return nil, nil
	}
	out, err := Read(ctx, dir, "diff", "--name-only", "-z", "--no-renames", "HEAD..."+upstream)
	if err != nil {
		return nil, err
	}
	var both []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" && mine[p] {
			both = append(both, p)
		}
	}
	return both, nil
}

// RebaseInProgress reports whether a rebase stopped halfway in the work
// tree whose git folder is gitDir.
func RebaseInProgress(gitDir string) bool {
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		if _, err := os.Stat(filepath.Join(gitDir, d)); err == nil {
			return true
		}
	}
	return false
}

// abortWait bounds git rebase --abort, whatever ctx's end: its checkout
// runs the person's filters, which may hang too. One stopped so leaves
// the rebase to the next try (kk serve's next start).
const abortWait = 2 * time.Minute

// AbortRebase aborts a rebase in progress in dir, restoring the branch
// and the work tree as they were before it (its autostash popped).
//
// A rebase git gave up before it began leaves a state folder git's own
// --abort cannot end ("could not read head-name"): git rebase
// --autostash stashes the work tree's changes into the folder
// (rebase-merge/autostash), resets the work tree to HEAD, and only then
// checks that the work tree is clean; a person's write in that instant
// fails the check ("cannot rebase: You have unstaged changes"), and git
// exits with the person's changes in that stash alone, out of the work
// tree and the stash list. AbortRebase then applies the stash to the
// work tree (as git's abort does), keeps it in the stash list when it
// does not apply, and removes the folder.
func AbortRebase(ctx context.Context, dir string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortWait)
	defer cancel()
	if out, err := Read(ctx, dir, "rev-parse", "--absolute-git-dir"); err == nil {
		if state := unbegunRebase(strings.TrimSpace(string(out))); state != "" {
			return dropUnbegunRebase(ctx, dir, state)
		}
	}
	_, err := runInput(ctx, dir, nil, nil, true, []string{"rebase", "--abort"})
	return err
}

// unbegunRebase returns the state folder of a rebase git gave up before
// it began (no head-name in it), "" when there is none.
func unbegunRebase(gitDir string) string {
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		state := filepath.Join(gitDir, d)
		if _, err := os.Stat(state); err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(state, "head-name")); err == nil {
			return ""
		}
		return state
	}
	return ""
}

// dropUnbegunRebase gives back the autostash of a rebase git gave up
// before it began, and removes its state folder.
func dropUnbegunRebase(ctx context.Context, dir, state string) error {
	data, err := os.ReadFile(filepath.Join(state, "autostash"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading the autostash of the rebase git gave up: %w", err)
	}
	if stash := strings.TrimSpace(string(data)); stash != "" {
		if _, aerr := runInput(ctx, dir, nil, nil, true, []string{"stash", "apply", "-q", stash}); aerr != nil {
			// Kept where the person finds it, as git keeps an autostash
			// that does not apply.
			if _, serr := runInput(ctx, dir, nil, nil, true, []string{"stash", "store", "-m", "autostash of a rebase git gave up before it began", stash}); serr != nil {
				return fmt.Errorf("the changes of the work tree are in the stash %s, which does not apply (%v) and could not be stored (%v): run git stash apply %s", stash, aerr, serr, stash)
			}
			if err := os.RemoveAll(state); err != nil {
				return err
			}
			return fmt.Errorf("the work tree's changes are kept in git stash list (they did not apply: %v): run git stash pop", aerr)
		}
	}
	return os.RemoveAll(state)
}

// ErrRejected means the remote refused a push because its branch moved
// (a fetch and a rebase come first).
var ErrRejected = errors.New("the remote's branch moved")

// Push pushes branch to remote under the same name. A push the remote
// refuses because its branch moved returns an error matching
// ErrRejected.
func Push(ctx context.Context, dir, remote, branch string) error {
	out, err := runTracingHooks(ctx, dir, noPrompt(ctx, dir), "push", "-q", "--porcelain", remote, "refs/heads/"+branch+":refs/heads/"+branch)
	// Refused as not a fast-forward, or beaten by another push to the
	// same branch (the remote's compare and swap missed).
	if err != nil && (strings.Contains(string(out), "[rejected]") || strings.Contains(err.Error(), "but expected") || strings.Contains(string(out), "failed to update ref")) {
		return fmt.Errorf("%w: %v", ErrRejected, err)
	}
	return sshAdvice(err)
}

// noPrompt is the environment of a git command that talks to a remote
// for a server, which no one answers: git never prompts on the terminal
// (GIT_TERMINAL_PROMPT=0, as for every command), and neither does ssh,
// run in BatchMode (a host key it never saw, a key's passphrase: it
// fails at once instead of waiting for an answer). BatchMode is added to
// the person's own ssh command (GIT_SSH_COMMAND, else core.sshCommand,
// as git chooses), never replacing it, when that command is OpenSSH's
// ssh (its first word named ssh); another program (plink, a wrapper,
// GIT_SSH) is left as it is.
func noPrompt(ctx context.Context, dir string) []string {
	command, ok := os.LookupEnv("GIT_SSH_COMMAND")
	if !ok || strings.TrimSpace(command) == "" {
		command = ""
		if out, err := Read(ctx, dir, "config", "--get", "core.sshCommand"); err == nil {
			command = strings.TrimSpace(string(out))
		}
	}
	if command == "" {
		if os.Getenv("GIT_SSH") != "" {
			return nil
		}
		command = "ssh"
	}
	first := strings.Fields(command)
	if len(first) == 0 {
		return nil
	}
	name := strings.Trim(first[0], `'"`)
	if base := filepath.Base(name); base != "ssh" && base != "ssh.exe" {
		return nil
	}
	return []string{"GIT_SSH_COMMAND=" + command + " -o BatchMode=yes"}
}

// sshAdvices say what to do about ssh's refusals in BatchMode (noPrompt),
// by the words OpenSSH reports them with.
var sshAdvices = []struct{ text, advice string }{
	{"Host key verification failed", "ssh does not know origin's host key, and kk serve does not ask (ssh runs in BatchMode): connect once with ssh as kk serve's user to accept the key, or add it to that user's ~/.ssh/known_hosts (ssh-keyscan)"},
	{"Permission denied (publickey", "ssh found no key it may use without asking (ssh runs in BatchMode: it asks no passphrase): give kk serve's user a key without a passphrase, or an ssh-agent holding the key (SSH_AUTH_SOCK in kk serve's environment)"},
	{"Permission denied (", "ssh could not log in without asking (ssh runs in BatchMode: no password or passphrase is asked): give kk serve's user a key without a passphrase, or an ssh-agent holding the key"},
}

// sshAdvice adds, to the error of a fetch or push that ssh refused
// without a prompt, what to do (git's own last line, "Could not read
// from remote repository", says nothing of it).
func sshAdvice(err error) error {
	if err == nil {
		return nil
	}
	for _, a := range sshAdvices {
		if strings.Contains(err.Error(), a.text) {
			return fmt.Errorf("%s: %w", a.advice, err)
		}
	}
	return err
}

// ResetIndexToHead puts the index entries of the paths commit changed
// back in step with HEAD, leaving the work tree alone. Repo.Commit puts
// the new index in place after moving the branch: a process killed in
// between leaves the index as it was before the commit, which git status
// shows as the commit's changes undone and staged. A recovery that finds
// the commit made calls this for it.
func ResetIndexToHead(ctx context.Context, dir, commit string) error {
	out, err := Read(ctx, dir, "diff-tree", "--no-commit-id", "--name-only", "-r", "-z", commit)
	if err != nil {
		return fmt.Errorf("listing the paths of commit %s: %w", commit, err)
	}
	paths := splitNUL(out)
	if len(paths) == 0 {
		return nil
	}
	if _, err := literal(ctx, dir, nil, append([]string{"reset", "-q", "HEAD", "--"}, paths...)...); err != nil {
		return fmt.Errorf("bringing the index in step with commit %s: %w", commit, err)
	}
	return nil
}
