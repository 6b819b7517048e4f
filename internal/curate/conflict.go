package curate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/yamlstyle"
)

// Conflict is a contradiction the curator found between a candidate and
// an existing node, waiting in conflicts/<id>.md for a human to decide.
type Conflict struct {
	ID         string
	RunID      string
	DetectedAt string
	Action     contracts.CuratorAction
}

const (
	rationaleHeading = "## Rationale"
	proposedHeading  = "## Proposed node"
)

// RenderConflict returns the conflict file: front matter with id,
// status: pending, detected_at, run_id, candidate_origin, target_node_id,
// proposed_kind, proposed_title and proposed_confidence, then a body with
// the curator's rationale and the proposed node's body. A contradiction
// without a proposed node has null proposed_* keys and an empty proposal.
func RenderConflict(c Conflict) ([]byte, error) {
	a := c.Action
	var target, kind, title, confidence any
	body := ""
	if a.TargetNodeID != nil {
		target = *a.TargetNodeID
	}
	if p := a.ProposedNode; p != nil {
		kind, title, confidence, body = p.Type, p.Title, p.Confidence, p.Body
	}
	fm, err := yamlstyle.Marshal(yamlstyle.Map{
		{Key: "id", Value: c.ID},
		{Key: "status", Value: "pending"},
		{Key: "detected_at", Value: c.DetectedAt},
		{Key: "run_id", Value: c.RunID},
		{Key: "candidate_origin", Value: a.CandidateOrigin},
		{Key: "target_node_id", Value: target},
		{Key: "proposed_kind", Value: kind},
		{Key: "proposed_title", Value: title},
		{Key: "proposed_confidence", Value: confidence},
	})
	if err != nil {
		return nil, fmt.Errorf("conflict %s: %w", c.ID, err)
	}
	var b strings.Builder
	b.WriteString("---\n")
	b.Write(fm)
	b.WriteString("---\n")
	b.WriteString(rationaleHeading + "\n\n" + a.Rationale + "\n\n" + proposedHeading + "\n\n" + body + "\n")
	return []byte(b.String()), nil
}

// ConflictFile is a conflict file as read back.
type ConflictFile struct {
	ID                 string  `json:"id"`
	Status             string  `json:"status"`
	DetectedAt         string  `json:"detected_at"`
	RunID              string  `json:"run_id"`
	CandidateOrigin    string  `json:"candidate_origin"`
	TargetNodeID       *string `json:"target_node_id"`
	ProposedKind       string  `json:"proposed_kind"`
	ProposedTitle      string  `json:"proposed_title"`
	ProposedConfidence string  `json:"proposed_confidence"`
	Rationale          string  `json:"rationale"`
	ProposedBody       string  `json:"proposed_body"`
}

// ParseConflict reads a conflict file; name is its file name. Keys that
// are missing read as empty (the id as the file name without .md).
func ParseConflict(name string, src []byte) (*ConflictFile, error) {
	doc, err := frontmatter.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", name, frontmatter.Describe(err))
	}
	if !doc.HasFrontMatter() {
		return nil, fmt.Errorf("%s: no front matter; a conflict file starts with a --- block", name)
	}
	str := func(key string) string {
		v, ok := doc.Value(key)
		if !ok || v == nil {
			return ""
		}
		if s, ok := v.(string); ok {
			return s
		}
		return fmt.Sprint(v)
	}
	c := &ConflictFile{
		ID: str("id"), Status: str("status"), DetectedAt: str("detected_at"), RunID: str("run_id"),
		CandidateOrigin: str("candidate_origin"), ProposedKind: str("proposed_kind"),
		ProposedTitle: str("proposed_title"), ProposedConfidence: str("proposed_confidence"),
	}
	if c.ID == "" {
		c.ID = strings.TrimSuffix(name, ".md")
	}
	if v, ok := doc.Value("target_node_id"); ok && v != nil {
		t := str("target_node_id")
		c.TargetNodeID = &t
	}
	c.Rationale, c.ProposedBody = splitConflictBody(string(doc.Body()))
	return c, nil
}

// splitConflictBody cuts a conflict body into the text under
// "## Rationale" and the text under "## Proposed node", each without
// leading or trailing white space. A missing section is empty.
func splitConflictBody(body string) (rationale, proposed string) {
	section := func(s, heading string) string {
		i := strings.Index(s, heading)
		if i < 0 {
			return ""
		}
		return strings.TrimFunc(s[i+len(heading):], unicode.IsSpace)
	}
	if i := strings.Index(body, proposedHeading); i >= 0 {
		return section(body[:i], rationaleHeading), section(body[i:], proposedHeading)
	}
	return section(body, rationaleHeading), ""
}

// Default replies the curate skill offers for a conflict.
const (
	ReplyAccept = "y" // take the proposed version
	ReplyReject = "n" // keep the existing node
	ReplySkip   = "s" // decide later
)

// ExistingNode is the node a conflict is about, as the skill shows it.
type ExistingNode struct {
	ID      string `json:"id"`
	Path    string `json:"path"` // nodes/<path>
	Title   string `json:"title"`
	Summary string `json:"summary"`
	Body    string `json:"body"`
}

// PreparedConflict is a pending conflict with its place in the review
// order and the default reply.
type PreparedConflict struct {
	ConflictFile
	// File is the conflict file, relative to the repository root.
	File         string        `json:"file"`
	GroupID      int           `json:"group_id"`
	FirstInGroup bool          `json:"first_in_group"`
	Existing     *ExistingNode `json:"existing"`
	LinesChanged int           `json:"lines_changed"`
	TotalLines   int           `json:"total_lines"`
	Ratio        float64       `json:"ratio"`
	Default      string        `json:"default"`
}

// Prepare reads the pending conflicts (status: pending) in dir, which
// defaults to the knowledge base's conflicts/ folder, and returns them in
// review order: by target node id (conflicts without a target last), then
// proposed kind, then detection time. Consecutive conflicts about the same
// node form a group; the existing node is shown with the first of each
// group only. Each conflict gets a default reply: skip when the target
// node does not exist; otherwise accept when the proposed body changes
// fewer than 5 lines of the existing one and is of high confidence, reject
// when it changes more than half of them, skip in between. Bodies are
// compared without their generated Related and Citations sections.
func Prepare(k *store.KB, dir string) ([]PreparedConflict, error) {
	if dir == "" {
		dir = k.ConflictsDir()
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading conflicts: %w", err)
	}
	var pending []PreparedConflict
	files := map[string]string{} // conflict id (any case) → the file holding it
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".md") {
			continue
		}
		path := filepath.Join(dir, name)
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		c, err := ParseConflict(k.Rel(path), src)
		if err != nil {
			return nil, err
		}
		// A reply names a conflict by its id: two files of one id (a copy
		// of a conflict file), decided or not, make it name two.
		key := strings.ToLower(c.ID)
		if first, dup := files[key]; dup {
			return nil, fmt.Errorf("%s and %s both have id %s; give each conflict file its own id (or delete the copy)", first, k.Rel(path), c.ID)
		}
		files[key] = k.Rel(path)
		if c.Status != "pending" {
			continue
		}
		pending = append(pending, PreparedConflict{ConflictFile: *c, File: k.Rel(path)})
	}
	// Ids compare without regard to case: conflicts about one node whose
	// target is spelled in two cases are one group, showing the node once.
	target := func(c PreparedConflict) string { return store.IDKey(*c.TargetNodeID) }
	slices.SortStableFunc(pending, func(a, b PreparedConflict) int {
		at, bt := a.TargetNodeID, b.TargetNodeID
		switch {
		case at == nil && bt != nil:
			return 1
		case at != nil && bt == nil:
			return -1
		case at != nil && bt != nil && target(a) != target(b):
			return strings.Compare(target(a), target(b))
		}
		if c := strings.Compare(a.ProposedKind, b.ProposedKind); c != 0 {
			return c
		}
		return strings.Compare(a.DetectedAt, b.DetectedAt)
	})
	existing, err := existingNodes(k, pending)
	if err != nil {
		return nil, err
	}
	group := 0
	for i := range pending {
		c := &pending[i]
		c.FirstInGroup = i == 0 || c.TargetNodeID == nil || pending[i-1].TargetNodeID == nil || target(pending[i-1]) != target(*c)
		if c.FirstInGroup {
			group++
		}
		c.GroupID = group
		var ex *ExistingNode
		if c.TargetNodeID != nil {
			ex = existing[target(*c)]
		}
		c.Default = ReplySkip
		if ex != nil {
			proposed, current := bodyLines(c.ProposedBody), bodyLines(ex.Body)
			c.LinesChanged = lineDiff(proposed, current)
			c.TotalLines = max(len(proposed), len(current))
			if c.TotalLines > 0 {
				c.Ratio = float64(c.LinesChanged) / float64(c.TotalLines)
			}
			switch {
			case c.LinesChanged < 5 && c.ProposedConfidence == "high":
				c.Default = ReplyAccept
			case c.Ratio > 0.5:
				c.Default = ReplyReject
			}
		}
		if c.FirstInGroup {
			c.Existing = ex
		}
	}
	return pending, nil
}

// existingNodes reads the nodes the conflicts are about, by store.IDKey of
// the target id; targets that are not in the tree are nil.
func existingNodes(k *store.KB, conflicts []PreparedConflict) (map[string]*ExistingNode, error) {
	out := map[string]*ExistingNode{}
	var t *store.Tree
	for _, c := range conflicts {
		if c.TargetNodeID == nil {
			continue
		}
		id := *c.TargetNodeID
		key := store.IDKey(id)
		if _, done := out[key]; done {
			continue
		}
		if t == nil {
			var err error
			if t, err = index.ReadTree(context.Background(), k); err != nil {
				return nil, err
			}
		}
		n, ok := t.ByID(id)
		if !ok {
			out[key] = nil
			continue
		}
		full, err := k.ReadLeaf(n.Path)
		if err != nil {
			return nil, err
		}
		out[key] = &ExistingNode{ID: full.ID, Path: "nodes/" + full.Path, Title: full.Title, Summary: full.Description,
			Body: node.RenderSections(string(full.Body), &node.Node{}, nil)}
	}
	return out, nil
}

// bodyLines splits a body into lines, ignoring trailing line breaks.
func bodyLines(body string) []string {
	body = strings.TrimRight(body, "\n")
	if body == "" {
		return nil
	}
	return strings.Split(body, "\n")
}

// lineDiff counts the lines deleted plus the lines inserted to turn a
// into b, through their longest common subsequence.
func lineDiff(a, b []string) int {
	// Common leading and trailing lines are in every longest common
	// subsequence; leaving them out keeps the quadratic part small.
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				cur[j] = prev[j+1] + 1
			} else {
				cur[j] = max(prev[j], cur[j+1])
			}
		}
		prev, cur = cur, prev
	}
	lcs := prev[0]
	return len(a) - lcs + len(b) - lcs
}
