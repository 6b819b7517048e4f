package gitx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// HeadBranch reads the branch checked out in dir's repository straight from
// its HEAD file, without starting git: it finds the .git folder (or the
// .git file of a linked worktree or submodule) in dir or above, and
// returns the branch HEAD points at. ok is false when that cannot be
// answered this way — no repository, a detached HEAD, GIT_DIR or
// GIT_WORK_TREE set, an unusual layout — and the caller should ask git.
func HeadBranch(dir string) (branch string, ok bool) {
	gitDir, ok := findGitDir(dir)
	if !ok {
		return "", false
	}
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", false
	}
	name, found := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: refs/heads/")
	if !found || name == "" {
		return "", false // detached, or a ref outside refs/heads
	}
	return name, true
}

// NotSparse reports, without starting git, that dir's work tree has no
// sparse checkout: its git folder (a linked worktree's own) holds no
// info/sparse-checkout file, which git's sparse checkout needs. False
// means "maybe"; ask git.
func NotSparse(dir string) bool {
	gitDir, ok := findGitDir(dir)
	if !ok {
		return false
	}
	_, err := os.Lstat(filepath.Join(gitDir, "info", "sparse-checkout"))
	return errors.Is(err, fs.ErrNotExist)
}

// findGitDir finds, without starting git, the git folder of dir's work
// tree: the .git folder in dir or above, or the folder the .git file of a
// linked worktree or submodule names. ok is false when that cannot be
// answered this way (no repository, GIT_DIR or GIT_WORK_TREE set, an
// unusual layout).
func findGitDir(dir string) (gitDir string, ok bool) {
	if os.Getenv("GIT_DIR") != "" || os.Getenv("GIT_WORK_TREE") != "" {
		return "", false
	}
	_, gitDir, ok = walkGitDir(dir)
	return gitDir, ok
}

// WorkTreeGitDir finds, without starting git, the work tree that holds dir
// (top, the folder holding .git) and its own git folder: the .git folder,
// or the folder the .git file of a linked worktree (.git/worktrees/<name>)
// or submodule (.git/modules/<name> of the super-project) names. It reads
// the file system only and ignores GIT_DIR and GIT_WORK_TREE, so that
// every process finds the same folder for the same dir, whatever its
// environment (kk's lock files depend on it). ok is false outside a
// repository found this way, or when the git folder named is not a folder.
func WorkTreeGitDir(dir string) (top, gitDir string, ok bool) {
	top, gitDir, ok = walkGitDir(dir)
	if !ok {
		return "", "", false
	}
	if fi, err := os.Stat(gitDir); err != nil || !fi.IsDir() {
		return "", "", false
	}
	return top, gitDir, true
}

// walkGitDir is findGitDir without its look at the environment.
func walkGitDir(dir string) (top, gitDir string, ok bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", false
	}
	for d := abs; ; {
		gitPath := filepath.Join(d, ".git")
		fi, err := os.Stat(gitPath)
		if err == nil {
			if fi.IsDir() {
				return d, gitPath, true
			}
			data, err := os.ReadFile(gitPath)
			if err != nil {
				return "", "", false
			}
			target, found := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
			if !found {
				return "", "", false
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(d, target)
			}
			return d, target, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", false
		}
		d = parent
	}
}

// NoRepository reports, without starting git, that dir is in no git
// repository: neither it nor a folder above holds .git, and GIT_DIR is not
// set. False means "maybe"; ask git.
func NoRepository(dir string) bool {
	if os.Getenv("GIT_DIR") != "" {
		return false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return false
		}
		parent := filepath.Dir(d)
		if parent == d {
			return true
		}
		d = parent
	}
}
