// Package discover finds the documentation files of a repository that a
// bootstrap turns into knowledge nodes, and compares them with the
// bootstrap state so that a re-run only looks at what changed.
package discover

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/progress"
	"github.com/kk-project/kk/internal/store"
)

// Doc is one candidate documentation file.
type Doc struct {
	// Path is relative to the repository root, with "/" separators.
	Path string `json:"path"`
	// SHA256 is the hex digest of the file's bytes, when hashes were asked for.
	SHA256 string `json:"sha256,omitempty"`
}

// Options tune Find.
type Options struct {
	// From limits the result to one folder (relative to the root, or
	// absolute inside it). Ignore patterns stay anchored at the root.
	From string
	// Hashes computes each file's SHA-256.
	Hashes bool
	// NoGit walks the file system even inside a git work tree.
	NoGit bool
}

// Result is what Find found.
type Result struct {
	Docs []Doc
	// Source is "git" when git listed the files (and answered .gitignore),
	// "walk" when the tree was walked.
	Source string
}

// ScopeError is a --from scope that cannot be used.
type ScopeError struct {
	Scope string
	Msg   string
}

func (e *ScopeError) Error() string { return fmt.Sprintf("--from %q %s", e.Scope, e.Msg) }

// skipNames are file names that are never bootstrap material: legal and
// community boilerplate, change logs, and generated index files (at any
// depth; case-sensitive, as kenkeep matches them).
var skipNames = map[string]bool{
	"LICENSE": true, "LICENSE.md": true, "LICENSE.txt": true,
	"COPYING": true, "COPYING.md": true, "NOTICE": true, "NOTICE.md": true,
	"CODE_OF_CONDUCT": true, "CODE_OF_CONDUCT.md": true,
	"CONTRIBUTORS": true, "CONTRIBUTORS.md": true, "AUTHORS": true, "AUTHORS.md": true,
	"MAINTAINERS": true, "MAINTAINERS.md": true, "CHANGELOG": true, "CHANGELOG.md": true,
	"CHANGES": true, "CHANGES.md": true, "HISTORY": true, "HISTORY.md": true,
	"RELEASE_NOTES": true, "RELEASE_NOTES.md": true,
	"ENTRY.md": true, "INDEX.md": true, "GRAPH.md": true, "index.md": true,
}

// skipDirs are folder names never descended into, at any depth.
var skipDirs = map[string]bool{".git": true, "node_modules": true}

// StaticSkip reports whether rel (a file path relative to the root) is
// excluded whatever the ignore files say.
func StaticSkip(rel string) bool {
	if rel == store.DirName || strings.HasPrefix(rel, store.DirName+"/") {
		// The knowledge base itself: its leaves are the output of a
		// bootstrap, not its input.
		return true
	}
	base := path.Base(rel)
	if skipNames[base] {
		return true
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		if skipDirs[p] || (p == "releases" && strings.HasSuffix(base, ".md")) {
			return true
		}
	}
	return false
}

// isDoc reports whether a file name is documentation.
func isDoc(name string) bool {
	return strings.HasSuffix(strings.ToLower(name), ".md")
}

// Find lists the documentation files of the repository at root: markdown
// files that are not statically skipped, not ignored by git (or, outside a
// work tree, by the root .gitignore) and not ignored by .kkignore, sorted
// by UTF-16 code units.
func Find(ctx context.Context, root string, opts Options) (*Result, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	scope, err := resolveScope(root, opts.From)
	if err != nil {
		return nil, err
	}
	kkignore, err := readIgnore(root, ".kkignore")
	if err != nil {
		return nil, err
	}
	res := &Result{}
	var files []string
	if !opts.NoGit && gitx.InWorkTree(ctx, root) {
		res.Source = "git"
		files, err = gitFiles(ctx, root, kkignore)
	} else {
		res.Source = "walk"
		task := progress.Start(ctx, "finddocs: documents found", 0)
		files, err = walkFiles(root, kkignore, task)
		task.Done()
	}
	if err != nil {
		return nil, err
	}
	if scope != "" {
		files = slices.DeleteFunc(files, func(f string) bool { return !strings.HasPrefix(f, scope+"/") })
	}
	slices.SortFunc(files, compareUTF16)
	res.Docs = make([]Doc, len(files))
	for i, f := range files {
		res.Docs[i].Path = f
	}
	if opts.Hashes {
		if err := hashDocs(ctx, root, res.Docs); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// resolveScope checks a --from folder and returns it relative to root
// ("" for the root itself).
func resolveScope(root, from string) (string, error) {
	if from == "" {
		return "", nil
	}
	abs := from
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, filepath.FromSlash(from))
	}
	abs = filepath.Clean(abs)
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", &ScopeError{Scope: from, Msg: "is outside the repository root " + root}
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &ScopeError{Scope: from, Msg: "does not exist"}
	}
	if err != nil {
		return "", &ScopeError{Scope: from, Msg: "cannot be read: " + err.Error()}
	}
	if !fi.IsDir() {
		return "", &ScopeError{Scope: from, Msg: "is not a folder"}
	}
	// A symbolic link inside the root may still lead out of it.
	realRoot, err1 := filepath.EvalSymlinks(root)
	realScope, err2 := filepath.EvalSymlinks(abs)
	if err1 == nil && err2 == nil {
		if r, err := filepath.Rel(realRoot, realScope); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", &ScopeError{Scope: from, Msg: "leads outside the repository root " + root + " through a symbolic link"}
		}
	}
	if rel == "." {
		return "", nil
	}
	return filepath.ToSlash(rel), nil
}

// readIgnore reads a gitignore-syntax file at the root; a missing file
// ignores nothing.
func readIgnore(root, name string) (*Ignore, error) {
	src, err := os.ReadFile(filepath.Join(root, name))
	if errors.Is(err, fs.ErrNotExist) {
		return &Ignore{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return ParseIgnore(name, src)
}

// gitFiles asks git for every tracked file and every untracked file that
// .gitignore (at any level), .git/info/exclude and core.excludesFile do not
// exclude, then applies the other filters.
func gitFiles(ctx context.Context, root string, kkignore *Ignore) ([]string, error) {
	all, err := gitx.ListFiles(ctx, root, true)
	if err != nil {
		return nil, err
	}
	var out []string
	dirIgnored := map[string]bool{}
	for _, f := range all {
		if strings.HasSuffix(f, "/") || !isDoc(f) || StaticSkip(f) {
			continue // "sub/" is an untracked nested repository
		}
		if ignoredByDirs(f, kkignore, dirIgnored) || kkignore.Match(f, false) {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted but not yet committed, or a symbolic link
		}
		out = append(out, f)
	}
	return out, nil
}

// ignoredByDirs reports whether a folder above rel is ignored, caching the
// answer per folder.
func ignoredByDirs(rel string, ig *Ignore, cache map[string]bool) bool {
	if ig.Empty() {
		return false
	}
	dir := path.Dir(rel)
	if dir == "." {
		return false
	}
	if v, ok := cache[dir]; ok {
		return v
	}
	v := ignoredByDirs(dir, ig, cache) || ig.Match(dir, true)
	cache[dir] = v
	return v
}

// walkFiles walks the tree outside git, honouring the root .gitignore and
// .kkignore; ignored folders are not entered.
func walkFiles(root string, kkignore *Ignore, task *progress.Task) ([]string, error) {
	gitignore, err := readIgnore(root, ".gitignore")
	if err != nil {
		return nil, err
	}
	var out []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable folder holds nothing we can use
		}
		if p == root {
			return nil
		}
		rel := filepath.ToSlash(p[len(root)+1:])
		if d.IsDir() {
			if skipDirs[d.Name()] || rel == store.DirName || gitignore.Match(rel, true) || kkignore.Match(rel, true) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !isDoc(d.Name()) || StaticSkip(rel) {
			return nil
		}
		if gitignore.Match(rel, false) || kkignore.Match(rel, false) {
			return nil
		}
		out = append(out, rel)
		task.Add(1)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walking %s: %w", root, err)
	}
	return out, nil
}

// hashDocs fills in the SHA-256 of every doc, reading files in parallel.
func hashDocs(ctx context.Context, root string, docs []Doc) error {
	workers := min(len(docs), 2*runtime.GOMAXPROCS(0))
	next := make(chan int)
	errs := make([]error, len(docs))
	task := progress.Start(ctx, "finddocs: hashing documents", len(docs))
	defer task.Done()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			buf := make([]byte, 64<<10)
			for i := range next {
				docs[i].SHA256, errs[i] = hashFile(filepath.Join(root, filepath.FromSlash(docs[i].Path)), buf)
				task.Add(1)
			}
		})
	}
	for i := range docs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// hashFile streams a file through SHA-256.
func hashFile(p string, buf []byte) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("hashing %s: %w", p, err)
	}
	defer func() { _ = f.Close() }()
	// A plain read loop: io.CopyBuffer would hand the copy to
	// (*os.File).WriteTo, which allocates a buffer of its own per file.
	h := sha256.New()
	for {
		n, err := f.Read(buf)
		h.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("hashing %s: %w", p, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// compareUTF16 orders strings by UTF-16 code units, as JavaScript's
// default sort does.
func compareUTF16(a, b string) int {
	for i, j := 0, 0; ; {
		if i == len(a) || j == len(b) {
			return (len(a) - i) - (len(b) - j)
		}
		if a[i] < 0x80 && b[j] < 0x80 {
			if a[i] != b[j] {
				return int(a[i]) - int(b[j])
			}
			i++
			j++
			continue
		}
		ra, na := utf8.DecodeRuneInString(a[i:])
		rb, nb := utf8.DecodeRuneInString(b[j:])
		if ra != rb {
			return utf16Key(ra) - utf16Key(rb)
		}
		i += na
		j += nb
	}
}

// utf16Key maps a rune to the first UTF-16 code unit that encodes it.
func utf16Key(r rune) int {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return int(hi)
	}
	return int(r)
}
