package checks

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"

	"github.com/kk-project/kk/internal/frontmatter"
)

// StatusReport summarises the state of a knowledge base.
type StatusReport struct {
	Root        string `json:"root"`
	Version     string `json:"version"`
	InstalledAt string `json:"installed_at"`
	// Nodes counts the leaves; NodesByType splits them by type.
	Nodes       int            `json:"nodes"`
	NodesByType map[string]int `json:"nodes_by_type"`
	// Folders counts the folders that hold leaves, the nodes/ root included.
	Folders int `json:"folders"`
	// InvalidLeaves counts leaf problems; when it is not 0 the counts above
	// are 0 and the index state is "unknown".
	InvalidLeaves int `json:"invalid_leaves"`
	// IndexState is "fresh", "stale" (ENTRY.md was generated from other
	// leaves), "missing" (no ENTRY.md or no nodes_hash in it) or "unknown".
	IndexState       string         `json:"index_state"`
	IndexFresh       bool           `json:"index_fresh"`
	Sessions         SessionCounts  `json:"sessions"`
	Conflicts        ConflictCounts `json:"conflicts"`
	MissingSummaries []string       `json:"missing_summaries"`
}

// SessionCounts counts the captured session logs in _sessions/.
type SessionCounts struct {
	Total   int `json:"total"`
	Pending int `json:"pending"` // proposal_status: pending (waiting for extraction)
	Other   int `json:"other"`
}

// ConflictCounts counts the curator conflict files in conflicts/.
type ConflictCounts struct {
	Total   int `json:"total"`
	Pending int `json:"pending"` // status: pending (waiting for a human)
}

// Index states of StatusReport.
const (
	indexFresh   = "fresh"
	indexStale   = "stale"
	indexMissing = "missing"
	indexUnknown = "unknown"
)

// Status reports what the knowledge base holds and what waits for work. It
// reads only. A knowledge base without .state/installed-version is not
// initialized, which is an error wrapping store.ErrNotFound.
func Status(ctx context.Context, k *store.KB) (*StatusReport, error) {
	in, err := k.ReadInstalled()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s exists but was never initialized (no %s); run `kk init`", store.ErrNotFound, store.DirName, k.Rel(k.InstalledPath()))
	}
	if err != nil {
		return nil, err
	}
	r := &StatusReport{Root: k.Root, Version: in.Version, InstalledAt: in.InstalledAt, NodesByType: map[string]int{},
		IndexState: indexUnknown, MissingSummaries: []string{}}
	t, err := k.ReadTree(store.LoadOptions{})
	var te *store.TreeError
	switch {
	case errors.As(err, &te):
		r.InvalidLeaves = len(te.Problems)
	case err != nil:
		return nil, err
	default:
		r.Nodes = len(t.Leaves)
		for _, n := range t.Leaves {
			r.NodesByType[n.Type]++
		}
		folders := leafFolders(t)
		r.Folders = len(folders)
		summaries, err := store.ReadSummaries(k.SummariesPath())
		if err != nil {
			return nil, err
		}
		for d := range folders {
			if d != "" && summaries[d] == "" {
				r.MissingSummaries = append(r.MissingSummaries, d)
			}
		}
		store.SortLocale(r.MissingSummaries)
		switch got, ok := k.EntryHash(); {
		case !ok:
			r.IndexState = indexMissing
		case got == indexfiles.NodesHash(t):
			r.IndexState, r.IndexFresh = indexFresh, true
		default:
			r.IndexState = indexStale
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	statuses, err := frontMatterValues(k.SessionsDir(), "proposal_status")
	if err != nil {
		return nil, err
	}
	for _, s := range statuses {
		r.Sessions.Total++
		if s == "pending" {
			r.Sessions.Pending++
		} else {
			r.Sessions.Other++
		}
	}
	statuses, err = frontMatterValues(k.ConflictsDir(), "status")
	if err != nil {
		return nil, err
	}
	for _, s := range statuses {
		r.Conflicts.Total++
		if s == "pending" {
			r.Conflicts.Pending++
		}
	}
	return r, nil
}

// frontMatterValues returns, for every *.md file directly in dir, the
// string value of key in its front matter ("" when absent or unreadable).
// A missing folder holds no files.
func frontMatterValues(dir, key string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".md") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	out := make([]string, len(names))
	store.Parallel(len(names), func(i int) {
		doc, err := readFrontMatter(filepath.Join(dir, names[i]))
		if err != nil {
			return
		}
		v, _ := doc.Value(key)
		out[i], _ = v.(string)
	})
	return out, nil
}

// maxFrontMatter bounds how much of a file readFrontMatter reads.
const maxFrontMatter = 1 << 20

// readFrontMatter parses the front matter of a file without reading the
// body after it, so large session transcripts cost only their header.
func readFrontMatter(path string) (*frontmatter.Doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, maxFrontMatter))
	var head bytes.Buffer
	for i := 0; ; i++ {
		line, err := r.ReadBytes('\n')
		head.Write(line)
		trimmed := strings.TrimRight(strings.TrimPrefix(string(line), "\uFEFF"), " \t\r\n")
		if i == 0 && trimmed != "---" {
			break // no front matter
		}
		if i > 0 && (trimmed == "---" || trimmed == "...") {
			break
		}
		if err != nil {
			break
		}
	}
	return frontmatter.Parse(head.Bytes())
}
