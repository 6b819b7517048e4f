package httpapi

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// TreePrefix is where the knowledge tree sits in the repository; every
// route that takes a note's path also takes it from the repository's
// root, starting with TreePrefix (a shell's completion gives that form).
const TreePrefix = ".ai/kenkeep/nodes/"

// cleanPath applies the API's path rules (knowledged's, plus kk's own) to
// a path a client gave, and returns it clean and relative to nodes/. It
// also takes the repository-relative path of a note (TreePrefix and the
// path in the tree); a write may not target a generated index.md. The
// messages are the client's 400 answers.
func cleanPath(p string, read bool) (string, error) {
	orig := p
	p = strings.ReplaceAll(strings.TrimSpace(p), `\`, "/")
	if p == "" {
		return "", errors.New("path must not be empty")
	}
	if strings.HasPrefix(p, "/") || (len(p) >= 2 && p[1] == ':') {
		return "", fmt.Errorf("path must be repo-relative: %s", orig)
	}
	clean := path.Clean(p)
	if clean == "." {
		return "", errors.New("path must not be empty")
	}
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("path must stay within the repository: %s", orig)
	}
	if rest, ok := strings.CutPrefix(clean, TreePrefix); ok {
		clean = rest
	}
	for _, seg := range strings.Split(clean, "/") {
		if seg == ".knowledged" {
			return "", errors.New("path must not target .knowledged")
		}
		if strings.HasPrefix(seg, ".") {
			return "", fmt.Errorf("path must not target a hidden file or folder: %s", orig)
		}
	}
	if !strings.HasSuffix(strings.ToLower(clean), ".md") {
		return "", fmt.Errorf("path must be a Markdown file: %s", orig)
	}
	if !read && clean == KnowledgedIndex {
		return "", errors.New("INDEX.md is generated from the notes when it is read, and cannot be written: post, edit or delete the notes it lists")
	}
	if !read && strings.EqualFold(path.Base(clean), "index.md") {
		return "", fmt.Errorf("path must not target a generated index file: %s", orig)
	}
	return clean, nil
}
