package pack

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// drupalPack is kenkeep's published Drupal pack (schema version 2), kept
// beside the repository in shared/fixtures.
// © 2026 Mateu Aguiló Bosch, MIT licence (its LICENSE file is in that folder).
const drupalPack = "../../../shared/fixtures/kenkeep-pack-drupal"

// newKB creates an initialised knowledge base in a temporary folder.
func newKB(t testing.TB) *store.KB {
	t.Helper()
	k := store.New(t.TempDir())
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "test", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Command: "test"}); err != nil {
		t.Fatal(err)
	}
	return k
}

// writeLeaf writes one leaf through kk's writer.
func writeLeaf(t testing.TB, k *store.KB, in contracts.NodeInput) {
	t.Helper()
	if _, err := curate.WriteNode(context.Background(), k, in, curate.WriteOptions{Mode: curate.Create, Command: "test"}); err != nil {
		t.Fatal(err)
	}
}

// writeSummaries replaces FOLDER_SUMMARIES.md.
func writeSummaries(t testing.TB, k *store.KB, s store.Summaries) {
	t.Helper()
	data, err := store.RenderSummaries(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.SummariesPath(), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot reads every file of the knowledge base that git would track
// (everything but .state/, except installed-version), and fails if an
// import left its private folder behind in .state/.
func snapshot(t testing.TB, k *store.KB) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(k.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), "pack-import-") {
			t.Errorf("%s was left behind", k.Rel(p))
		}
		if d.IsDir() {
			return nil
		}
		if strings.HasPrefix(p, k.StateDir()+string(filepath.Separator)) && p != k.InstalledPath() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[k.Rel(p)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readDir reads every file under dir, by slash path relative to it.
func readDir(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameFiles reports every difference between two file sets.
func sameFiles(t testing.TB, what string, want, got map[string]string) {
	t.Helper()
	var diffs []string
	for _, p := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[p]; !ok {
			diffs = append(diffs, "missing "+p)
		} else if g != want[p] {
			diffs = append(diffs, "changed "+p)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[p]; !ok {
			diffs = append(diffs, "added "+p)
		}
	}
	if len(diffs) > 0 {
		t.Errorf("%s:\n  %s", what, strings.Join(diffs, "\n  "))
	}
}

// tarEntry is one entry of a test archive.
type tarEntry struct {
	hdr  tar.Header
	body string
}

func file(name, body string) tarEntry {
	return tarEntry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body))}, body: body}
}

// tarHeader is the header of a link or special file.
func tarHeader(typ byte, name, target string) tar.Header {
	return tar.Header{Typeflag: typ, Name: name, Linkname: target, Mode: 0o644}
}

func dir(name string) tarEntry {
	return tarEntry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755}}
}

// makeArchive writes entries as a .tar.gz file and returns its path.
func makeArchive(t testing.TB, entries []tarEntry) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		hdr := e.hdr
		if err := tw.WriteHeader(&hdr); err != nil {
			t.Fatalf("writing entry %s: %v", hdr.Name, err)
		}
		if e.body != "" {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "pack.tar.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// archiveDir makes a .tar.gz of the folder src with its entries under
// top/ ("" for none), the way a release archive wraps them, with a global
// header as git archive writes one.
func archiveDir(t testing.TB, src, top string) string {
	t.Helper()
	entries := []tarEntry{{hdr: tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "0123456789abcdef"}}}}
	prefix := ""
	if top != "" {
		prefix = top + "/"
		entries = append(entries, dir(prefix))
	}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "." {
			return nil
		}
		name := prefix + filepath.ToSlash(rel)
		if d.IsDir() {
			entries = append(entries, dir(name+"/"))
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		entries = append(entries, file(name, string(data)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return makeArchive(t, entries)
}

// smallManifest is a valid manifest for test packs.
const smallManifest = "name: tiny\nversion: 0.1.0\nschema_version: 3\nsummary: a tiny pack\n"

// smallLeaf is a valid v3 leaf, practice-tiny.
const smallLeaf = "---\ntype: practice\ntitle: Tiny\ndescription: A tiny leaf.\ntags: []\nkk_schema_version: 3\nkk_id: practice-tiny\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\n---\nTiny body.\n"

// writePackDir writes files (slash paths) into a new folder and returns it.
func writePackDir(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
