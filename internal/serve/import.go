package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// KnowledgedSource is the prefix of the kk_derived_from entry that ties a
// leaf to the knowledged note it was imported from.
const KnowledgedSource = "knowledged:"

// ImportResult says what an import did. Paths are relative to nodes/.
type ImportResult struct {
	Created   []string        `json:"created"`
	Updated   []string        `json:"updated"`
	Unchanged []string        `json:"unchanged"`
	Skipped   []ImportSkipped `json:"skipped"`
	// Renamed lists the folders of the knowledged repository whose notes
	// went to another folder name, one kk creates (see importFolder).
	Renamed []ImportRenamed `json:"renamed"`
}

// ImportRenamed is a folder of the knowledged repository (From) whose
// notes are in nodes/To.
type ImportRenamed struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// ImportSkipped is a markdown file of the knowledged repository that is
// not a note.
type ImportSkipped struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// knowledgedNote is one note of a knowledged repository.
type knowledgedNote struct {
	rel                string // relative to the repository, "/"-separated
	title, description string
	tags               []string
	created, modified  string
	body               string
	sum                string // sha256 (hex) of the note's bytes
}

// keySourceSum records, in a leaf imported from a knowledged note, the
// sha256 of the note's bytes as imported: a later import updates the leaf
// only when the note changed since.
const keySourceSum = "kk_source_sha256"

// readKnowledged lists the notes of the knowledged repository at dir:
// every *.md but INDEX.md, outside .git and .knowledged, that has front
// matter with a title. Anything else is skipped, with the reason.
func readKnowledged(dir string) ([]knowledgedNote, []ImportSkipped, error) {
	var notes []knowledgedNote
	var skipped []ImportSkipped
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(strings.TrimPrefix(p, dir), string(filepath.Separator)))
		if d.IsDir() {
			if rel != "" && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(strings.ToLower(rel), ".md") || rel == "INDEX.md" {
			return nil
		}
		if !d.Type().IsRegular() {
			skipped = append(skipped, ImportSkipped{rel, "not a regular file (a symbolic link, a pipe): never read"})
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		doc, err := frontmatter.Parse(src)
		if err != nil {
			skipped = append(skipped, ImportSkipped{rel, "unreadable front matter: " + err.Error()})
			return nil
		}
		str := func(key string) string {
			v, _ := doc.Value(key)
			switch v := v.(type) {
			case string:
				return strings.TrimSpace(v)
			case time.Time:
				return v.UTC().Format(time.RFC3339)
			case nil:
				return ""
			}
			return strings.TrimSpace(fmt.Sprint(v))
		}
		sum := sha256.Sum256(src)
		n := knowledgedNote{rel: rel, title: str("title"), description: str("description"), created: utcTime(str("created")), modified: utcTime(str("modified")),
			body: strings.TrimLeft(string(doc.Body()), "\r\n"), sum: hex.EncodeToString(sum[:])}
		if !doc.HasFrontMatter() || n.title == "" {
			skipped = append(skipped, ImportSkipped{rel, "no front matter with a title: not a knowledged note"})
			return nil
		}
		if v, ok := doc.Value("tags"); ok {
			list, _ := v.([]any)
			for _, t := range list {
				if s, ok := t.(string); ok {
					n.tags = append(n.tags, s)
				}
			}
		}
		n.title = strings.Join(strings.Fields(n.title), " ")
		n.description = strings.Join(strings.Fields(n.description), " ")
		notes = append(notes, n)
		return nil
	})
	slices.SortFunc(notes, func(a, b knowledgedNote) int { return strings.Compare(a.rel, b.rel) })
	return notes, skipped, err
}

// importFolder is the folder under nodes/ that the notes of the knowledged
// folder dir go to: dir, with a name kk would not create made the nearest
// one it does (node.MakeableFolder), recorded in renamed (the knowledged
// folder: the folder under nodes/).
func importFolder(dir string, renamed map[string]string) (string, error) {
	folder, err := node.CleanFolder(dir)
	if err != nil {
		return "", err
	}
	to := node.MakeableFolder(folder)
	if to != folder {
		renamed[folder] = to
	}
	return to, nil
}

// utcTime is an RFC 3339 time s in UTC, as knowledged writes its times
// and kk its own (a note edited by hand may give another offset); s
// itself when it is not such a time.
func utcTime(s string) string {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC().Format(time.RFC3339)
	}
	return s
}

// ImportKnowledged brings the notes of the knowledged repository at dir
// into k's tree in one transaction: each note becomes a leaf in the same
// folder, with its title, description, tags and body, its created and
// modified times as kk_created_at and kk_updated_at, and
// kk_derived_from "knowledged:<path>", and the sha256 of the note's bytes
// as kk_source_sha256. A note imported before is updated in place from its
// source when the source changed since (its sha256 is not the one the leaf
// records), so a second run changes nothing, and what was written in kk
// since to a note whose source did not change stays.
func ImportKnowledged(ctx context.Context, k *store.KB, dir string) (*ImportResult, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", dir)
	}
	notes, skipped, err := readKnowledged(dir)
	if err != nil {
		return nil, err
	}
	res := &ImportResult{Created: []string{}, Updated: []string{}, Unchanged: []string{}, Skipped: skipped, Renamed: []ImportRenamed{}}
	if res.Skipped == nil {
		res.Skipped = []ImportSkipped{}
	}
	var touched []*node.Node
	done, err := txn.Update(ctx, k, txn.Meta{Source: "cli", Command: "kk import knowledged"}, func(tx *txn.Tx) error {
		t, err := tx.Tree()
		if err != nil {
			return err
		}
		bySource := map[string]*node.Node{}
		for _, n := range t.Leaves {
			for _, src := range n.DerivedFrom {
				if strings.HasPrefix(src, KnowledgedSource) {
					bySource[src] = n
				}
			}
		}
		renamed := map[string]string{}
		for _, kn := range notes {
			n, err := importNote(tx, kn, bySource[KnowledgedSource+kn.rel], renamed)
			if err != nil {
				return fmt.Errorf("%s: %w", kn.rel, err)
			}
			touched = append(touched, n)
		}
		for _, from := range slices.Sorted(maps.Keys(renamed)) {
			res.Renamed = append(res.Renamed, ImportRenamed{From: from, To: renamed[from]})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	written := map[string]string{}
	for _, op := range done.Ops {
		written[op.Path] = op.Op
	}
	for _, n := range touched {
		switch written[n.Path] {
		case "create":
			res.Created = append(res.Created, n.Path)
		case "update":
			res.Updated = append(res.Updated, n.Path)
		default:
			res.Unchanged = append(res.Unchanged, n.Path)
		}
	}
	return res, nil
}

// importNote stages one knowledged note: an update of the leaf imported
// from it before (old), else a new leaf, in the note's folder, or the
// name importFolder gives it (recorded in renamed).
func importNote(tx *txn.Tx, kn knowledgedNote, old *node.Node, renamed map[string]string) (*node.Node, error) {
	source := KnowledgedSource + kn.rel
	var folder string
	var err error
	if old == nil {
		if folder, err = importFolder(path.Dir(kn.rel), renamed); err != nil {
			return nil, err
		}
	}
	var n *node.Node
	if old != nil {
		if n, err = tx.LeafAt(old.Path); err != nil {
			return nil, err
		}
		if sum, _ := n.Extra(keySourceSum); sum == kn.sum {
			// The source has not changed since the leaf took it (the
			// leaf records the sha256 of its bytes): the leaf is left as
			// it is, with what was written in kk since (a description, a
			// tag), which the source never held.
			return n, nil
		}
		n.Title, n.Description, n.Tags, n.Body = kn.title, kn.description, cleanTags(kn.tags), []byte(kn.body)
		tx.Put(n)
	} else {
		typ := noteType(kn.title)
		base := strings.TrimSuffix(path.Base(kn.rel), path.Ext(kn.rel))
		id, err := node.DeriveID(typ, base)
		if err != nil {
			return nil, err
		}
		if _, taken := tx.Resolve(id); taken {
			if id, err = node.DeriveID(typ, strings.ReplaceAll(strings.TrimSuffix(kn.rel, path.Ext(kn.rel)), "/", "-")); err != nil {
				return nil, err
			}
		}
		if id, err = freeID(tx, id, kn.rel); err != nil {
			return nil, err
		}
		in := contracts.NodeInput{Type: typ, Slug: id, Title: kn.title, Description: kn.description, Tags: cleanTags(kn.tags),
			Folder: folder, Body: kn.body, DerivedFrom: []string{source}}
		if _, n, err = curate.WriteInTx(tx, in, curate.WriteOptions{Mode: curate.Create}); err != nil {
			return nil, err
		}
	}
	// In this order, so that the front matter is the same bytes on every
	// run (a map's order is not).
	for _, kv := range [...][2]string{{keyCreatedAt, kn.created}, {keyUpdatedAt, kn.modified}, {keySourceSum, kn.sum}} {
		if kv[1] == "" {
			continue
		}
		if err := n.SetExtra(kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
	return n, nil
}
