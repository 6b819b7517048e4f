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

	"github.com/kk-project/kk/internal/freshness"
	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/session"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/trace"

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
	// InvalidLeaves counts the leaf files kk cannot read and skips; the
	// counts above are of the others.
	InvalidLeaves int `json:"invalid_leaves"`
	// IndexState is "fresh", "stale" (ENTRY.md was generated from other
	// leaves, or a generated file differs from what the leaves and
	// FOLDER_SUMMARIES.md generate, as kk index rebuild --check finds),
	// "missing" (no ENTRY.md or no nodes_hash in it) or "unknown".
	IndexState       string         `json:"index_state"`
	IndexFresh       bool           `json:"index_fresh"`
	Sessions         SessionCounts  `json:"sessions"`
	Conflicts        ConflictCounts `json:"conflicts"`
	MissingSummaries []string       `json:"missing_summaries"`
	// Phrasings counts the readable leaves without kk_phrasings.
	Phrasings index.PhrasingCounts `json:"phrasings"`
	// Graph is what the current branch's index holds beyond the leaves.
	Graph     GraphCounts     `json:"graph"`
	Freshness StatusFreshness `json:"freshness"`
}

// GraphCounts counts the entities of the index (leaves and the entities
// extractors read from documents and symbol manifests), the atoms and
// molecules, the requirements no test verifies, and kk check's
// violations.
type GraphCounts struct {
	Entities       int            `json:"entities"`
	EntitiesByType map[string]int `json:"entities_by_type"`
	Atoms          int            `json:"atoms"`
	Molecules      int            `json:"molecules"`
	// AtomsWithoutMolecule lists the orphan atoms (no kk_molecule, or one
	// naming a molecule that does not exist), sorted.
	AtomsWithoutMolecule []string `json:"atoms_without_molecule"`
	Requirements         int      `json:"requirements"`
	// RequirementsWithoutCoverage lists the requirements, whatever their
	// priority, with no verified_by edge to an existing test.
	RequirementsWithoutCoverage []string `json:"requirements_without_coverage"`
	// Violations counts kk check's violations by rule, every rule listed.
	Violations     map[string]int `json:"violations"`
	ViolationCount int            `json:"violation_count"`
}

// SessionCounts counts the captured session logs in _sessions/.
type SessionCounts struct {
	Total   int `json:"total"`
	Pending int `json:"pending"` // proposal_status: pending (waiting for extraction)
	Other   int `json:"other"`
	// Curation counts the logs whose candidates wait for a curate run
	// (proposal_status done, no curator_processed_at): kenkeep's curation
	// queue; Candidates sums their candidates (practice and map).
	Curation   int `json:"curation_queue"`
	Candidates int `json:"candidates"`
	// ByStatus counts the logs by proposal_status (pending, done, failed,
	// skipped).
	ByStatus map[string]int `json:"by_status"`
}

// StatusFreshness is kk freshness in short: how many committed nodes
// reference files changed after them (kenkeep's "nodes describing changed
// code"); Available is false, with the reason, outside git.
type StatusFreshness struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	Nodes     int    `json:"considered_nodes"`
	Flagged   int    `json:"flagged"`
	// Shallow: the check read a shallow clone's history (see
	// freshness.Report.Shallow).
	Shallow bool `json:"shallow,omitempty"`
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
// reads only (bringing the derived index under .state/ up to date first,
// as every read of the index does). A knowledge base without .state/installed-version is not
// initialized, which is an error wrapping store.ErrNotFound.
func Status(ctx context.Context, k *store.KB) (*StatusReport, error) {
	in, err := k.ReadInstalled()
	if errors.Is(err, fs.ErrNotExist) {
		if cerr := index.CheckedOut(ctx, k); cerr != nil {
			// A sparse checkout left it out: kk init would write another.
			return nil, cerr
		}
		return nil, fmt.Errorf("%w: %s exists but was never initialized (no %s); run `kk init`", store.ErrNotFound, store.DirName, k.Rel(k.InstalledPath()))
	}
	if err != nil {
		return nil, err
	}
	r := &StatusReport{Root: k.Root, Version: in.Version, InstalledAt: in.InstalledAt, NodesByType: map[string]int{},
		IndexState: indexUnknown, MissingSummaries: []string{}, Graph: GraphCounts{EntitiesByType: map[string]int{},
			AtomsWithoutMolecule: []string{}, RequirementsWithoutCoverage: []string{}, Violations: map[string]int{}}}
	t, err := index.ReadTree(ctx, k)
	switch {
	case err != nil:
		return nil, err
	default:
		r.InvalidLeaves = len(t.Problems)
		r.Nodes = len(t.Leaves)
		for _, n := range t.Leaves {
			r.NodesByType[n.Type]++
		}
		r.Phrasings = CountPhrasings(t)
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
			if stale := staleGenerated(ctx, k); len(stale) > 0 {
				r.IndexState, r.IndexFresh = indexStale, false
			}
		default:
			r.IndexState = indexStale
		}
		if err := graphCounts(ctx, k, &r.Graph); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	statuses, err := frontMatterValues(k.SessionsDir(), "proposal_status")
	if err != nil {
		return nil, err
	}
	r.Sessions.ByStatus = map[string]int{}
	for _, s := range statuses {
		r.Sessions.Total++
		if s != "" {
			r.Sessions.ByStatus[s]++
		}
		if s == "pending" {
			r.Sessions.Pending++
		} else {
			r.Sessions.Other++
		}
	}
	// The curation queue, from the logs that read as session logs.
	logs, _, err := session.List(k.SessionsDir())
	if err != nil {
		return nil, err
	}
	for _, l := range logs {
		if l.AwaitingCuration() {
			r.Sessions.Curation++
			r.Sessions.Candidates += l.Candidates("practice") + l.Candidates("map")
		}
	}
	fr := freshness.CheckAndRecord(ctx, k, freshness.Options{}, k.Time())
	r.Freshness = StatusFreshness{Available: fr.Available, Reason: fr.Reason, Nodes: fr.ConsideredNodes, Flagged: fr.FlaggedCount, Shallow: fr.Shallow}
	if !fr.Available {
		// freshness says "not inside a git work tree" where git refuses a
		// repository that is there: say so, with git's fix.
		if g := RefusedByGit(ctx, k.Root); g != nil {
			r.Freshness.Reason = g.String()
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

// graphCounts fills c from the current branch's index, synced first: the
// entities by type (trace.ReadAll), the atoms and molecules (graph), the
// requirements without a verifying test and the violations of every rule
// (trace, the rules of kk check).
func graphCounts(ctx context.Context, k *store.KB, c *GraphCounts) error {
	all, err := trace.ReadAll(ctx, k)
	if err != nil {
		return err
	}
	c.Entities = len(all.Entities)
	for _, e := range all.Entities {
		c.EntitiesByType[e.Type]++
		if e.Type == graph.TypeReq {
			c.Requirements++
		}
	}
	g, err := graph.LoadIndexed(ctx, k, false)
	if err != nil {
		return err
	}
	defer func() { _ = g.Close() }()
	c.Atoms, c.Molecules = len(g.Atoms), len(g.Molecules)
	for _, a := range g.Atoms {
		if g.MoleculeOf(a) == nil {
			c.AtomsWithoutMolecule = append(c.AtomsWithoutMolecule, a.ID)
		}
	}
	slices.Sort(c.AtomsWithoutMolecule)
	if c.RequirementsWithoutCoverage, err = trace.Unverified(ctx, k); err != nil {
		return err
	}
	res, err := trace.KBCheck(ctx, k, trace.KBCheckParams{})
	if err != nil {
		return err
	}
	for _, rule := range trace.CheckRules {
		c.Violations[rule.Name] = 0
	}
	for _, v := range res.Violations {
		c.Violations[v.Rule]++
	}
	c.ViolationCount = len(res.Violations)
	return nil
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
	defer func() { _ = f.Close() }()
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
