package search

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/kk-project/kk/internal/graph"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
)

// The read operations every face shares: one node with its edges and
// changelog (kk_read), ranked full-text search over the branch index
// (kk_search), and the entry file (kk_entry).

// ReadParams is the parameter object of kk_read: exactly one of id and path.
type ReadParams struct {
	ID               string `json:"id,omitempty" jsonschema:"description=The node id (kk_id)\\, e.g. map-auth-flow. Give id or path\\, not both."`
	Path             string `json:"path,omitempty" jsonschema:"description=The leaf file: relative to nodes/ (auth/flow.md) or to the repository (.ai/kenkeep/nodes/auth/flow.md). Give id or path\\, not both."`
	IncludeChangelog *bool  `json:"includeChangelog,omitempty" jsonschema:"description=Include the newest changelog entries (default true)."`
	ChangelogLimit   *int   `json:"changelogLimit,omitempty" jsonschema:"description=How many changelog entries to return\\, newest first (default 5).,minimum=0,maximum=1000"`
}

// NodeView is one node as kk_read returns it.
type NodeView struct {
	ID          string   `json:"id"`
	Path        string   `json:"path"` // relative to the repository
	Type        string   `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Status      string   `json:"status,omitempty"`
	Confidence  string   `json:"confidence,omitempty"`
	Priority    string   `json:"priority,omitempty"`
	Severity    string   `json:"severity,omitempty"`
	Owner       string   `json:"owner,omitempty"`
	// DerivedFrom is the node's provenance (doc paths, URLs, session ids);
	// StaleAfter the date after which it should be checked again.
	DerivedFrom []string `json:"derivedFrom,omitempty"`
	StaleAfter  string   `json:"staleAfter,omitempty"`
	// Phrasings are the questions a developer would ask to find the node
	// (kk_phrasings), which search indexes with it.
	Phrasings []string `json:"phrasings,omitempty"`
	// Paths and MoleculeID are set for atoms.
	Paths      []string `json:"paths,omitempty"`
	MoleculeID string   `json:"moleculeId,omitempty"`
	Version    int64    `json:"version"`
	// Body is the markdown body without kk's generated Related and
	// Citations blocks.
	Body string `json:"body"`
	// Edges are the node's outgoing edges: relates_to and depends_on ids,
	// kk_related entries (type "related", kind holding the reason) and
	// kk_edges, in that order.
	Edges []graph.Edge `json:"edges"`
	// Changelog holds the newest entries first; ChangelogTotal counts all.
	Changelog      []graph.ChangelogEntry `json:"changelog,omitempty"`
	ChangelogTotal int                    `json:"changelogTotal"`
	// Meta is when the node was made and changed, where its facts came
	// from, its links and its text reference (what the leaf records; the
	// file's modification time stands in for times it does not).
	node.Meta
}

func ReadNode(ctx context.Context, k *store.KB, p ReadParams) (*NodeView, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit := graph.DefaultChangelogLimit
	if p.ChangelogLimit != nil {
		if *p.ChangelogLimit < 0 || *p.ChangelogLimit > graph.MaxLimit {
			return nil, op.Invalid("changelogLimit", "must be between 0 and %d", graph.MaxLimit)
		}
		limit = *p.ChangelogLimit
	}
	var rel string
	switch {
	case p.ID != "" && p.Path != "":
		return nil, op.Invalid("id", "give id or path, not both")
	case p.ID != "":
		// The branch index, synced for the read, says where the leaf is;
		// when the leaf is not there any more (moved by hand since the
		// long-running process last looked at the tree), the index is
		// synced with the tree and asked again.
		db, err := graph.BranchIndex(ctx, k)
		if err != nil {
			return nil, err
		}
		if _, err := graph.SyncForRead(ctx, k, db); err != nil {
			return nil, err
		}
		path, version, found, err := db.LeafPath(ctx, p.ID)
		if err != nil {
			return nil, err
		}
		if found {
			if n, err := k.ReadLeaf(path); err == nil && store.IDKey(n.ID) == store.IDKey(p.ID) {
				return viewWithVersion(ctx, k, db, n, p.IncludeChangelog == nil || *p.IncludeChangelog, limit, &version)
			}
		}
		ex, err := index.ExtractionFor(k)
		if err != nil {
			return nil, err
		}
		if _, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil {
			return nil, err
		}
		if path, _, found, err = db.LeafPath(ctx, p.ID); err != nil {
			return nil, err
		}
		if !found {
			if err := graph.UnreadableLeaf(ctx, k, db, "node", p.ID); err != nil {
				return nil, err
			}
			// A retired id (kk node rename, delete --redirect-to, a
			// split) names the notes that took its place.
			if r, err := k.ReadRedirects(); err == nil {
				live := func(id string) bool { _, _, ok, err := db.LeafPath(ctx, id); return err == nil && ok }
				if to := store.ResolveRedirect(r, p.ID, live); len(to) > 0 {
					return nil, op.New(op.CodeNotFound, map[string]any{"id": op.Cut(p.ID), "retired_to": to},
						"no node with id %s: it was retired to %s (%s); read that instead", op.Quote(p.ID), strings.Join(to, ", "), k.Rel(k.RedirectsPath()))
				}
			}
			return nil, op.New(op.CodeNotFound, map[string]any{"id": op.Cut(p.ID)}, "no node with id %s", op.Quote(p.ID))
		}
		rel = path
	case p.Path != "":
		var perr *op.Error
		if rel, perr = LeafPath(k, p.Path); perr != nil {
			return nil, perr
		}
		if k.LeadsOutOfTree(rel) {
			return nil, op.Invalid("path", "%q is a symlink, or under one, that leads out of the knowledge tree; kk reads no file outside it (replace the link with the file)", p.Path)
		}
	default:
		return nil, op.Invalid("id", "give the id or the path of the node to read")
	}
	n, err := k.ReadLeaf(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, op.New(op.CodeNotFound, map[string]any{"path": graph.RepoPath(rel)}, "no leaf at %s", graph.RepoPath(rel))
	}
	if err != nil {
		return nil, err
	}
	return viewWithVersion(ctx, k, nil, n, p.IncludeChangelog == nil || *p.IncludeChangelog, limit, nil)
}

// viewWithVersion is viewNode with the version the branch index records
// for the leaf: its kk_version, or one more when it changed outside kk
// (an editor, a git pull) without raising it. That is the version a write
// must name.
// db is the branch index when the caller has synced it for the read (nil:
// it is synced here), version the version it records for the leaf when
// the caller read it with the leaf's path (nil: it is asked).
func viewWithVersion(ctx context.Context, k *store.KB, db *index.DB, n *node.Node, withLog bool, limit int, version *int64) (*NodeView, error) {
	v, err := viewNode(n, withLog, limit)
	if err != nil {
		return nil, err
	}
	v.Meta = n.Meta()
	if fi, err := os.Stat(filepath.Join(k.NodesDir(), filepath.FromSlash(n.Path))); err == nil {
		v.Meta = v.Meta.WithFallbackTime(fi.ModTime())
	}
	if version != nil {
		v.Version = *version
		return v, nil
	}
	if db == nil {
		if db, err = graph.BranchIndex(ctx, k); err != nil {
			return nil, err
		}
		if _, err := graph.SyncForRead(ctx, k, db); err != nil {
			return nil, err
		}
	}
	vs, err := db.Versions(ctx, []string{n.Path})
	if err != nil {
		return nil, err
	}
	if iv, ok := vs[n.Path]; ok {
		v.Version = iv
	}
	return v, nil
}

// LeafPath turns a path given by a caller (relative to nodes/, to the
// repository, or absolute inside nodes/) into a leaf path relative to
// nodes/. Paths outside nodes/, with "..", or not naming a .md leaf are a
// VALIDATION_ERROR.
func LeafPath(k *store.KB, p string) (string, *op.Error) {
	given := p
	p = strings.TrimSpace(p)
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(k.NodesDir(), p)
		if err != nil || r == ".." || strings.HasPrefix(filepath.ToSlash(r), "../") {
			return "", op.Invalid("path", "%q is not inside %s", given, k.Rel(k.NodesDir()))
		}
		p = r
	}
	p = filepath.ToSlash(p)
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", op.Invalid("path", "%q must not contain \"..\"", given)
		}
	}
	p = path.Clean(p)
	if prefix := path.Join(store.DirName, "nodes") + "/"; strings.HasPrefix(p, prefix) {
		p = strings.TrimPrefix(p, prefix)
	} else {
		p = strings.TrimPrefix(p, "nodes/")
	}
	base := path.Base(p)
	if p == "." || p == "" || !strings.HasSuffix(p, ".md") || base == "index.md" || base == "log.md" || strings.HasPrefix(base, ".") {
		return "", op.Invalid("path", "%q does not name a leaf (a .md file under nodes/ other than index.md)", given)
	}
	return p, nil
}

func viewNode(n *node.Node, withLog bool, limit int) (*NodeView, error) {
	f, err := graph.FieldsOf(n)
	if err != nil {
		return nil, err
	}
	v := &NodeView{
		ID: n.ID, Path: graph.RepoPath(n.Path), Type: n.Type, Title: n.Title, Description: n.Description,
		Tags: node.List(n.Tags), Status: n.Status, Confidence: n.Confidence,
		Priority: f.Priority, Severity: f.Severity, Owner: f.Owner,
		DerivedFrom: n.DerivedFrom, StaleAfter: n.StaleAfter, Phrasings: n.Phrasings,
		Version: f.Version, Body: f.Knowledge, Edges: []graph.Edge{}, ChangelogTotal: len(f.Changelog),
	}
	if graph.IsAtom(n) {
		v.Paths = node.List(f.Paths)
		v.MoleculeID = f.Molecule
	}
	for _, to := range n.RelatesTo {
		v.Edges = append(v.Edges, graph.Edge{Type: "relates_to", To: to})
	}
	for _, to := range n.DependsOn {
		v.Edges = append(v.Edges, graph.Edge{Type: "depends_on", To: to})
	}
	for _, rel := range f.Related {
		v.Edges = append(v.Edges, graph.Edge{Type: "related", To: rel.ID, Kind: rel.Reason})
	}
	v.Edges = append(v.Edges, f.Edges...)
	if withLog {
		v.Changelog = graph.NewestFirst(f.Changelog, limit, 0)
	}
	return v, nil
}

// SearchParams is the parameter object of kk_search.
type SearchParams struct {
	Query string   `json:"query" jsonschema:"description=Words to look for; stemmed (retrying finds retry)\\, punctuation and search operators are plain text.,minLength=1"`
	Limit *int     `json:"limit,omitempty" jsonschema:"description=At most this many hits (default 10).,minimum=1,maximum=100"`
	Types []string `json:"types,omitempty" jsonschema:"description=Only nodes of these types (practice\\, map\\, req\\, …)."`
	Tags  []string `json:"tags,omitempty" jsonschema:"description=Only nodes carrying every one of these tags."`
	// MinScore drops the hits scoring below it.
	MinScore *float64 `json:"min_score,omitempty" jsonschema:"description=Drop the hits scoring below this (scores are relative to the query: compare them within one search).,minimum=0"`
	// All is accepted for callers written when search refused queries
	// that no node answered; search now always lists its matches.
	All bool `json:"all,omitempty" jsonschema:"description=Kept for older callers: search always lists its best matches now (see min_score)."`
}

// SearchData is the data of kk_search.
type SearchData struct {
	Branch string      `json:"branch"`
	Query  string      `json:"query"`
	Hits   []index.Hit `json:"hits"`
	// Skipped are the files the index had to leave out (unreadable or
	// malformed leaves and extractor sources).
	Skipped []index.Problem `json:"skipped,omitempty"`
}

// Search limits of kk_search.
const (
	DefaultSearchLimit = 10
	MaxSearchLimit     = 100
)

// SearchNodesOn is SearchNodes on the index of branch ("" for the current
// one).
func SearchNodesOn(ctx context.Context, k *store.KB, branch string, p SearchParams) (*SearchData, error) {
	limit := DefaultSearchLimit
	if p.Limit != nil {
		if *p.Limit < 1 || *p.Limit > MaxSearchLimit {
			return nil, op.Invalid("limit", "must be between 1 and %d", MaxSearchLimit)
		}
		limit = *p.Limit
	}
	if !index.Searchable(p.Query) {
		return nil, op.Invalid("query", "%s holds no word to look for", op.Quote(p.Query))
	}
	cur, err := index.CurrentBranch(ctx, k)
	if err != nil {
		return nil, err
	}
	if branch == "" {
		branch = cur
	}
	other := branch != cur && cur != index.DetachedHEAD
	if _, err := os.Stat(index.Path(k, branch)); other && err != nil {
		// A new index would be a copy of the default branch's, not this
		// branch's notes.
		return nil, op.New(op.CodeNotFound, map[string]any{"branch": branch},
			"branch %s has no search index yet: kk makes a branch's index while the branch is checked out (git checkout %s, or kk sync there)", branch, branch)
	}
	db, err := index.OpenShared(ctx, k, branch)
	if err != nil {
		return nil, err
	}
	r := index.Request{Text: p.Query, Limit: limit, Types: p.Types, Tags: p.Tags}
	if p.MinScore != nil {
		if *p.MinScore < 0 || math.IsNaN(*p.MinScore) {
			return nil, op.Invalid("min_score", "must be a number of at least 0")
		}
		r.MinScore = *p.MinScore
	}
	var hits []index.Hit
	var st index.Stats
	if other {
		// Another branch is checked out: the work tree holds its notes,
		// not this branch's, and a sync would write them into this
		// branch's index. It is searched as it was last synced (while
		// the branch was checked out). A detached HEAD (a CI checkout
		// of the branch named) is synced with the work tree, as ever.
		hits, err = db.Search(ctx, r)
	} else {
		hits, st, err = db.SearchDuring(ctx, r, func(ctx context.Context) (index.Stats, error) {
			return graph.SyncForRead(ctx, k, db)
		})
	}
	if err != nil {
		return nil, err
	}
	return &SearchData{Branch: branch, Query: p.Query, Hits: hits, Skipped: st.Skipped}, nil
}

// EntryParams is the parameter object of kk_entry (it has none).
type EntryParams struct{}

// EntryData is the data of kk_entry.
type EntryData struct {
	Path    string `json:"path"` // relative to the repository
	Content string `json:"content"`
}

// ReadEntry runs kk_entry: the knowledge base's ENTRY.md.
func ReadEntry(ctx context.Context, k *store.KB, _ EntryParams) (*EntryData, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rel := path.Join(store.DirName, "ENTRY.md")
	src, problem, err := readEntryFile(k.EntryPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, op.New(op.CodeNotFound, map[string]any{"path": rel}, "%s does not exist; run kk index rebuild", rel)
	}
	if err != nil {
		return nil, err
	}
	if problem != "" {
		return nil, op.New(op.CodeInvariant, map[string]any{"path": rel},
			"%s %s, so kk does not read it: it is generated from the notes, so remove it and run kk index rebuild; kk_search finds the notes meanwhile", rel, problem)
	}
	if from, to := node.ConflictMarkers(src); from > 0 {
		// A merge stopped on it: its text is git's two sides, no overview.
		return nil, op.New(op.CodeInvariant, map[string]any{"path": rel, "from_line": from, "to_line": to},
			"%s %s (lines %d to %d): a merge stopped on it. It is generated from the notes: resolve the conflicts in the notes, run kk index rebuild to write it again, then git add it; kk_search finds the notes meanwhile",
			rel, node.ConflictMarkersMsg, from, to)
	}
	return &EntryData{Path: rel, Content: string(src)}, nil
}

// SearchNodes runs kk_search: ranked full-text search over the current
// branch's index, which is created (from the default branch's) and synced
// first.
func SearchNodes(ctx context.Context, k *store.KB, p SearchParams) (*SearchData, error) {
	return SearchNodesOn(ctx, k, "", p)
}

// maxEntryBytes bounds the ENTRY.md ReadEntry returns.
const maxEntryBytes = 16 << 20

// readEntryFile reads ENTRY.md at p when it is a regular file (a link to
// one counts) of at most maxEntryBytes; otherwise problem says what it is
// instead. A named pipe would hold the call for ever and a device such as
// /dev/zero would never end.
func readEntryFile(p string) (src []byte, problem string, err error) {
	const notFile = "is not a regular file (a named pipe, a device or a socket)"
	fi, err := os.Stat(p)
	if err != nil {
		return nil, "", err
	}
	if !fi.Mode().IsRegular() {
		return nil, notFile, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = f.Close() }()
	if fi, err = f.Stat(); err != nil {
		return nil, "", err
	}
	if !fi.Mode().IsRegular() {
		return nil, notFile, nil
	}
	if src, err = io.ReadAll(io.LimitReader(f, maxEntryBytes+1)); err != nil {
		return nil, "", err
	}
	if len(src) > maxEntryBytes {
		return nil, fmt.Sprintf("is over %d MiB", maxEntryBytes>>20), nil
	}
	return src, "", nil
}
