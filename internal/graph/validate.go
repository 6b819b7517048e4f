package graph

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/kk-project/kk/internal/extract"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
)

// Bounds of seed 002's Validation Rules.
const (
	MaxPatterns       = 20
	MaxPatternChars   = 512
	MaxKnowledgeBytes = 32 * 1024
	MaxNameChars      = 255
	MaxSummaryBytes   = 4 * 1024
	MaxRelated        = 50
	MaxTaskIDChars    = 255
)

// ValidatePattern checks one atom path pattern: a valid glob, relative,
// without ".." segments, at most MaxPatternChars characters.
func ValidatePattern(field, p string) *op.Error {
	switch {
	case strings.TrimSpace(p) == "":
		return op.Invalid(field, "a pattern must not be empty")
	case p != strings.TrimSpace(p):
		return op.Invalid(field, "pattern %q has leading or trailing spaces", p)
	case utf8.RuneCountInString(p) > MaxPatternChars:
		return op.Invalid(field, "pattern is %d characters; the limit is %d", utf8.RuneCountInString(p), MaxPatternChars)
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || filepath.VolumeName(p) != "" || len(p) > 1 && p[1] == ':':
		return op.Invalid(field, "pattern %q is absolute; patterns are relative to the repository root", p)
	case strings.ContainsAny(p, "\n\r\x00"):
		return op.Invalid(field, "pattern %q holds a line break or NUL", p)
	}
	for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return op.Invalid(field, "pattern %q climbs out of the repository with ..", p)
		}
	}
	if !doublestar.ValidatePattern(p) {
		return op.Invalid(field, "pattern %q is not a valid glob", p)
	}
	return nil
}

// ValidatePaths checks an atom's pattern list and returns it without
// duplicates (first occurrence kept). An empty list breaks the atom
// invariant (an atom without paths has no boundary).
func ValidatePaths(field string, paths []string) ([]string, *op.Error) {
	if len(paths) == 0 {
		return nil, op.Invariant(field, "an atom needs at least one path pattern")
	}
	if len(paths) > MaxPatterns {
		return nil, op.Invalid(field, "%d patterns; the limit is %d per atom", len(paths), MaxPatterns)
	}
	out := make([]string, 0, len(paths))
	for i, p := range paths {
		if err := ValidatePattern(fmt.Sprintf("%s[%d]", field, i), p); err != nil {
			return nil, err
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// ValidateKnowledge trims knowledge and checks its size.
func ValidateKnowledge(field, s string) (string, *op.Error) {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) {
		return "", op.Invalid(field, "is not valid UTF-8")
	}
	if len(s) > MaxKnowledgeBytes {
		return "", op.Invalid(field, "is %d bytes after trimming; the limit is %d (32 KB)", len(s), MaxKnowledgeBytes)
	}
	if err := checkText(field, s); err != nil {
		return "", err
	}
	return s, nil
}

// ValidateName trims a name and checks it is 1–255 characters on one line.
func ValidateName(field, s string) (string, *op.Error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", op.Invalid(field, "must not be empty")
	case !utf8.ValidString(s):
		return "", op.Invalid(field, "is not valid UTF-8")
	case strings.IndexByte(s, 0) >= 0:
		return "", op.Invalid(field, "holds a NUL byte")
	case utf8.RuneCountInString(s) > MaxNameChars:
		return "", op.Invalid(field, "is %d characters; the limit is %d", utf8.RuneCountInString(s), MaxNameChars)
	case strings.ContainsAny(s, "\n\r"):
		return "", op.Invalid(field, "must be one line")
	}
	if err := CheckNoControl(field, s); err != nil {
		return "", err
	}
	return s, nil
}

// CheckNoControl refuses a one-line text holding a control character
// other than a tab (an escape sequence in a title would drive the
// terminal of whoever lists it) or a bidirectional control (text that
// reads otherwise than it is stored), naming the field, the character and
// its position: node.LineProblem, the rule of every writer.
func CheckNoControl(field, s string) *op.Error {
	if msg := node.LineProblem(s); msg != "" {
		return op.Invalid(field, "%s", msg)
	}
	return nil
}

// checkText refuses a multi-line text holding a control character other
// than a tab, a line feed and a carriage return, naming the field, the
// character and its line: node.TextProblem.
func checkText(field, s string) *op.Error {
	if msg := node.TextProblem(s); msg != "" {
		return op.Invalid(field, "%s", msg)
	}
	return nil
}

// ValidateSummary trims a changelog summary and checks it is 1 B–4 KB.
func ValidateSummary(field, s string) (string, *op.Error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", op.Invalid(field, "must not be empty")
	case len(s) > MaxSummaryBytes:
		return "", op.Invalid(field, "is %d bytes; the limit is %d (4 KB)", len(s), MaxSummaryBytes)
	case !utf8.ValidString(s):
		return "", op.Invalid(field, "is not valid UTF-8")
	case strings.IndexByte(s, 0) >= 0:
		return "", op.Invalid(field, "holds a NUL byte")
	}
	if err := checkText(field, s); err != nil {
		return "", err
	}
	return s, nil
}

// ValidateTaskID checks an opaque task id: any text on one line, at most
// 255 characters. required says whether it may be empty.
func ValidateTaskID(field, s string, required bool) *op.Error {
	switch {
	case s == "" && required:
		return op.Invalid(field, "is required")
	case strings.ContainsAny(s, "\n\r\x00"):
		return op.Invalid(field, "must be one line")
	case utf8.RuneCountInString(s) > MaxTaskIDChars:
		return op.Invalid(field, "is %d characters; the limit is %d", utf8.RuneCountInString(s), MaxTaskIDChars)
	}
	return CheckNoControl(field, s)
}

// ValidateProjectID accepts "" and this KB's project id.
func ValidateProjectID(k *store.KB, id string) *op.Error {
	if id == "" {
		return nil
	}
	return checkProjectID(id, ProjectID(k))
}

// CheckProjectID is ValidateProjectID against cfg, k's config as the
// caller read it (a transaction's).
func CheckProjectID(k *store.KB, cfg store.Config, id string) *op.Error {
	if id == "" {
		return nil
	}
	return checkProjectID(id, cmp.Or(cfg.ProjectID, filepath.Base(k.Root)))
}

func checkProjectID(id, want string) *op.Error {
	if id == want {
		return nil
	}
	return op.New(op.CodeValidation, map[string]any{"field": "projectId", "projectId": id, "expected": want},
		"projectId: %q is not this knowledge base's project (%q)", id, want)
}

// ProjectID is the project id of k: config projectId, else (no setting, or
// an unreadable config) the repository folder's name.
func ProjectID(k *store.KB) string {
	if cfg, err := k.LoadConfig(); err == nil && cfg.ProjectID != "" {
		return cfg.ProjectID
	}
	return filepath.Base(k.Root)
}

// EdgeRule says which entity types an edge type may connect. Empty lists
// mean any type.
type EdgeRule = extract.EdgeRule

// EdgeTable is the typed-edge table of ARCHITECTURE.md: the extractors'
// table (extract.EdgeRules, the one definition) plus relates_to, which
// links any two entities and must carry a kind.
var EdgeTable = func() map[string]EdgeRule {
	t := map[string]EdgeRule{"relates_to": {}}
	maps.Copy(t, extract.EdgeRules)
	return t
}()

// EdgeTypes lists the edge types in a stable order.
func EdgeTypes() []string {
	out := make([]string, 0, len(EdgeTable))
	for t := range EdgeTable {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// CheckEdge checks an edge of type edgeType from an entity of type from to
// one of type to. kind is relates_to's qualifier.
func CheckEdge(edgeType, from, to, kind string) *op.Error {
	rule, known := EdgeTable[edgeType]
	if !known {
		return op.Invalid("type", "%q is not an edge type; use one of %s", edgeType, strings.Join(EdgeTypes(), ", "))
	}
	if edgeType == "relates_to" {
		if strings.TrimSpace(kind) == "" {
			return op.Invalid("kind", "a relates_to edge needs a kind saying how the two are related")
		}
		return nil
	}
	if !slices.Contains(rule.From, from) {
		return op.New(op.CodeValidation, map[string]any{"edge": edgeType, "from": from, "to": to},
			"a %s edge starts at a %s, not a %s", edgeType, strings.Join(rule.From, " or "), from)
	}
	if !slices.Contains(rule.To, to) {
		return op.New(op.CodeValidation, map[string]any{"edge": edgeType, "from": from, "to": to},
			"a %s edge ends at a %s, not a %s", edgeType, strings.Join(rule.To, " or "), to)
	}
	return nil
}
