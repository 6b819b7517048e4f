// Package httpapitest holds what the tests of kk serve's HTTP face share:
// GitBackend, a test-only Backend over a temporary git repository, and a
// running server over it. Only tests import it.
package httpapitest

// GitBackend is a test-only Backend over a temporary git repository: a
// plain folder of notes with knowledged-style front matter, a word-count
// search, and the real gitx commit helpers. It stands in for kk's core
// (the store transaction and the search engine) so that the HTTP face,
// the queue and the git side can be tested together; it is not how kk
// writes leaves.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/llm"
	"github.com/kk-project/kk/internal/schema"
)

// Author is the identity of the test backend's commits.
var Author = gitx.Author{Name: "kk serve", Email: "kk-serve@kk.invalid"}

type GitBackend struct {
	Root string // repository root
	// Provider answers /answer and /ask; nil is offline.
	Provider llm.Provider
	// BeforeWrite, when set, runs in Apply before anything is written.
	BeforeWrite func(j *httpapi.Job) error
	mu          sync.Mutex // the test's stand-in for the writer lock
}

func (b *GitBackend) tree() string {
	return filepath.Join(b.Root, filepath.FromSlash(httpapi.TreePrefix))
}

func (b *GitBackend) file(p string) string { return filepath.Join(b.tree(), filepath.FromSlash(p)) }

type note struct {
	Title, Description string
	Tags               []string
	Created, Modified  time.Time
	Body               string
}

func (n note) render() string {
	tags, _ := json.Marshal(n.Tags)
	if n.Tags == nil {
		tags = []byte("[]")
	}
	return fmt.Sprintf("---\ntitle: %s\ndescription: %s\ntags: %s\ncreated: %s\nmodified: %s\n---\n\n%s",
		strconv.Quote(n.Title), strconv.Quote(n.Description), tags, n.Created.Format(time.RFC3339), n.Modified.Format(time.RFC3339), n.Body)
}

func parseNote(src string) (note, error) {
	rest, ok := strings.CutPrefix(src, "---\n")
	head, body, ok2 := strings.Cut(rest, "\n---\n")
	if !ok || !ok2 {
		return note{}, errors.New("no front matter")
	}
	n := note{Body: strings.TrimPrefix(body, "\n")}
	for _, line := range strings.Split(head, "\n") {
		k, v, _ := strings.Cut(line, ": ")
		var err error
		switch k {
		case "title":
			n.Title, err = strconv.Unquote(v)
		case "description":
			n.Description, err = strconv.Unquote(v)
		case "tags":
			err = json.Unmarshal([]byte(v), &n.Tags)
		case "created":
			n.Created, err = time.Parse(time.RFC3339, v)
		case "modified":
			n.Modified, err = time.Parse(time.RFC3339, v)
		}
		if err != nil {
			return note{}, fmt.Errorf("%s: %w", k, err)
		}
	}
	return n, nil
}

func (b *GitBackend) Read(_ context.Context, p string) (string, error) {
	data, err := os.ReadFile(b.file(p))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: %w", p, httpapi.ErrNotFound)
	}
	return string(data), err
}

// all returns every note, by path.
func (b *GitBackend) all() (map[string]note, error) {
	out := map[string]note{}
	err := filepath.WalkDir(b.tree(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n, err := parseNote(string(data))
		if err != nil {
			return nil // ordinary markdown is not a note, and breaks nothing
		}
		rel, _ := filepath.Rel(b.tree(), p)
		out[filepath.ToSlash(rel)] = n
		return nil
	})
	return out, err
}

func (b *GitBackend) Search(_ context.Context, query string, limit int) ([]string, error) {
	notes, err := b.all()
	if err != nil {
		return nil, err
	}
	type hit struct {
		path  string
		score int
	}
	var hits []hit
	for p, n := range notes {
		text := strings.ToLower(n.Title + " " + n.Body)
		score := 0
		for _, w := range strings.Fields(strings.ToLower(query)) {
			score += strings.Count(text, w)
		}
		if score > 0 {
			hits = append(hits, hit{p, score})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.score != b.score {
			return b.score - a.score
		}
		return strings.Compare(a.path, b.path)
	})
	var paths []string
	for _, h := range hits[:min(limit, len(hits))] {
		paths = append(paths, h.path)
	}
	return paths, nil
}

func lower(tags []string) []string {
	var out []string
	for _, t := range tags {
		out = append(out, strings.ToLower(t))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (b *GitBackend) ByTags(_ context.Context, tags []string, all bool) ([]httpapi.TagDoc, error) {
	notes, err := b.all()
	if err != nil {
		return nil, err
	}
	var out []httpapi.TagDoc
	for p, n := range notes {
		have := lower(n.Tags)
		matched := 0
		for _, t := range tags {
			if slices.Contains(have, t) {
				matched++
			}
		}
		if matched > 0 && (!all || matched == len(tags)) {
			out = append(out, httpapi.TagDoc{Path: p, Title: n.Title, Description: n.Description, Tags: have, Modified: n.Modified})
		}
	}
	slices.SortFunc(out, func(a, b httpapi.TagDoc) int {
		if c := b.Modified.Compare(a.Modified); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out, nil
}

func (b *GitBackend) Notes(context.Context) ([]httpapi.Note, error) {
	notes, err := b.all()
	if err != nil {
		return nil, err
	}
	var out []httpapi.Note
	for p, n := range notes {
		out = append(out, httpapi.Note{Path: p, Title: n.Title, Description: n.Description})
	}
	slices.SortFunc(out, func(a, b httpapi.Note) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

func (b *GitBackend) Tags(context.Context) ([]httpapi.TagCount, error) {
	notes, err := b.all()
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, n := range notes {
		for _, t := range lower(n.Tags) {
			counts[t]++
		}
	}
	var out []httpapi.TagCount
	for t, c := range counts {
		out = append(out, httpapi.TagCount{Tag: t, Count: c})
	}
	slices.SortFunc(out, func(a, b httpapi.TagCount) int { return strings.Compare(a.Tag, b.Tag) })
	return out, nil
}

func (b *GitBackend) Recent(ctx context.Context, n int) ([]httpapi.Post, error) {
	commits, err := gitx.RecentJobCommits(ctx, b.Root, httpapi.OpStore, Author, n)
	if err != nil {
		return nil, err
	}
	var posts []httpapi.Post
	for _, c := range commits {
		p := httpapi.Post{JobID: c.ID, Path: c.Path, CreatedAt: c.Time}
		if data, err := os.ReadFile(b.file(c.Path)); err == nil {
			if nt, err := parseNote(string(data)); err == nil {
				p.Tags = nt.Tags
			}
		}
		posts = append(posts, p)
	}
	return posts, nil
}

func (b *GitBackend) decide(ctx context.Context, name, prompt string, out any) error {
	s, err := schema.ForLLM(name)
	if err != nil {
		return err
	}
	raw, err := b.Provider.Complete(ctx, llm.Request{System: "test", Prompt: prompt, Schema: s})
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

func (b *GitBackend) Answer(ctx context.Context, query string) (httpapi.Answer, error) {
	if b.Provider == nil {
		return httpapi.Answer{}, llm.ErrNotConfigured
	}
	paths, err := b.Search(ctx, query, httpapi.DefaultSearchLimit)
	if err != nil || len(paths) == 0 {
		return httpapi.Answer{}, err
	}
	var prompt strings.Builder
	var read []string
	for _, p := range paths {
		content, err := b.Read(ctx, p)
		if err != nil {
			return httpapi.Answer{}, err
		}
		fmt.Fprintf(&prompt, "=== %s ===\n%s\n\n", p, content)
		read = append(read, p)
	}
	fmt.Fprintf(&prompt, "Question: %s", query)
	var a struct {
		Answer  string   `json:"answer"`
		Sources []string `json:"sources"`
	}
	if err := b.decide(ctx, "serve-answer", prompt.String(), &a); err != nil {
		return httpapi.Answer{}, &httpapi.SynthesisError{Err: err}
	}
	return httpapi.Answer{Sources: read, Answer: a.Answer}, nil
}

func (b *GitBackend) Ask(ctx context.Context, question string) (httpapi.Draft, error) {
	if b.Provider == nil {
		return httpapi.Draft{}, llm.ErrNotConfigured
	}
	var d struct {
		Title  string   `json:"title"`
		Answer string   `json:"answer"`
		Tags   []string `json:"tags"`
	}
	if err := b.decide(ctx, "serve-ask", question, &d); err != nil {
		return httpapi.Draft{}, err
	}
	return httpapi.Draft{Title: d.Title, Answer: d.Answer, Tags: d.Tags}, nil
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-")
}

func (b *GitBackend) Apply(ctx context.Context, j *httpapi.Job) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.BeforeWrite != nil {
		if err := b.BeforeWrite(j); err != nil {
			return "", err
		}
	}
	now := time.Now().UTC().Truncate(time.Second)
	r := j.Request
	p := r.Path
	var n note
	switch j.Op {
	case httpapi.OpStore:
		title := r.Title
		if title == "" {
			title = strings.TrimSpace(strings.TrimLeft(strings.SplitN(strings.TrimSpace(r.Content), "\n", 2)[0], "# "))
		}
		p = path.Join("inbox", slug(title)+".md")
		for i := 2; ; i++ {
			if _, err := os.Stat(b.file(p)); errors.Is(err, fs.ErrNotExist) {
				break
			}
			p = path.Join("inbox", fmt.Sprintf("%s-%d.md", slug(title), i))
		}
		n = note{Title: title, Tags: r.Tags, Created: j.Created.UTC().Truncate(time.Second), Modified: now, Body: strings.TrimLeft(r.Content, "\n")}
	case httpapi.OpEdit, httpapi.OpDelete:
		data, err := os.ReadFile(b.file(p))
		if err != nil {
			return "", fmt.Errorf("file not found: %s", p)
		}
		if n, err = parseNote(string(data)); err != nil {
			return "", fmt.Errorf("%s: %w", p, err)
		}
		if r.Content != "" {
			n.Body = strings.TrimLeft(r.Content, "\n")
		}
		if r.Title != "" {
			n.Title = r.Title
		}
		if r.Description != "" {
			n.Description = r.Description
		}
		if len(r.Tags) > 0 {
			n.Tags = r.Tags
		}
		n.Modified = now
	default:
		return "", fmt.Errorf("unknown operation %q", j.Op)
	}
	repoPath := httpapi.TreePrefix + p
	if err := j.Touch(repoPath); err != nil {
		return "", err
	}
	if j.Op == httpapi.OpDelete {
		if err := os.Remove(b.file(p)); err != nil {
			return "", err
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(b.file(p)), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(b.file(p), []byte(n.render()), 0o644); err != nil {
			return "", err
		}
	}
	if _, err := gitx.CommitPaths(ctx, b.Root, Author, gitx.JobSubject(j.Op, j.ID, p), []string{repoPath}); err != nil {
		return "", err
	}
	return p, nil
}
