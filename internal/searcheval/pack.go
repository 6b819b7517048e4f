package searcheval

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/migrate"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// LoadPhrasings reads a phrasings file: a mapping "phrasings" from leaf id
// to the phrasings to give that leaf.
func LoadPhrasings(path string) (map[string][]string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Phrasings map[string][]string `yaml:"phrasings"`
	}
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Phrasings) == 0 {
		return nil, fmt.Errorf("%s: no phrasings", path)
	}
	return doc.Phrasings, nil
}

// BuildPack makes a knowledge base in dir (which must be empty or
// missing) holding the leaves of a kenkeep v2 pack (its knowledge/
// folder), migrated to v3 as kk migrate okf-v3 does, and gives the leaves
// named in phrasings their kk_phrasings. It fails when phrasings names a
// leaf the pack does not have.
func BuildPack(ctx context.Context, dir, packDir string, phrasings map[string][]string) (*store.KB, error) {
	k := store.New(dir)
	if _, err := txn.Init(ctx, k, store.InitOptions{Version: "eval", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Command: "searcheval"}); err != nil {
		return nil, err
	}
	if err := copyTree(filepath.Join(packDir, "knowledge"), k.NodesDir()); err != nil {
		return nil, err
	}
	if _, err := migrate.MigrateOKFv3(ctx, k, "searcheval"); err != nil {
		return nil, err
	}
	if len(phrasings) > 0 {
		if err := addPhrasings(k, phrasings); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// BuildNodes makes a knowledge base in dir (which must be empty or
// missing) holding a copy of a nodes/ tree of leaves in kk's or kenkeep's
// v3 format (such as shared/fixtures/kenkeep-kb/nodes), and gives the
// leaves named in phrasings their kk_phrasings.
func BuildNodes(ctx context.Context, dir, nodesDir string, phrasings map[string][]string) (*store.KB, error) {
	k := store.New(dir)
	if _, err := txn.Init(ctx, k, store.InitOptions{Version: "eval", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Command: "searcheval"}); err != nil {
		return nil, err
	}
	if err := copyTree(nodesDir, k.NodesDir()); err != nil {
		return nil, err
	}
	if len(phrasings) > 0 {
		if err := addPhrasings(k, phrasings); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// leafFiles lists the leaves under nodes/ (every .md but index.md).
func leafFiles(nodesDir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(nodesDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != nodesDir {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") && d.Name() != "index.md" {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

func addPhrasings(k *store.KB, phrasings map[string][]string) error {
	_, err := curate.SetPhrasings(context.Background(), k, phrasings, "searcheval")
	return err
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
