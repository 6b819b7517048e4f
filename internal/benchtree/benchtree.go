// Package benchtree generates synthetic knowledge trees for benchmarks: N
// valid v3 leaves with a fixed seed, spread over nested topical folders,
// with Zipf-distributed tags, edges between leaves and folder summaries.
// The same N and seed always give the same bytes.
package benchtree

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// Options shape a generated tree.
type Options struct {
	Nodes int    // number of leaves
	Seed  uint64 // random seed; the same seed gives the same tree
	// Atoms of the leaves are atoms (type map with 1–20 kk_paths patterns);
	// Molecules more leaves are molecules, and most atoms belong to one.
	Atoms     int
	Molecules int
	// Vocabulary, when set, draws body words from that many distinct words
	// with Zipf-distributed frequencies, as natural text has them, the
	// domain words of titles and tags placed among the middle ranks;
	// otherwise bodies use the 56 domain words uniformly (every query
	// word then occurs in most leaves: a worst case for ranked search).
	Vocabulary int
}

var words = strings.Fields(`api auth cache config cli database deploy error event feature flag graph
handler http index job lint log metric migration model network node parser plugin queue
release request retry route schema search server service session storage stream sync task
template test timeout token trace tree user validation worker build client context file`)

// Pattern roots and extensions of generated atom patterns and paths.
var (
	patternRoots = []string{"src", "internal", "cmd", "pkg", "web", "docs"}
	extensions   = []string{"go", "ts", "md", "sql", "yaml"}
)

// home is the folder atom i is about: every atom has its own, as the
// modules of a large repository have theirs.
func home(i int) string {
	return fmt.Sprintf("%s/%s/%s-%d", patternRoots[i%len(patternRoots)], words[(i/len(patternRoots))%len(words)], words[(i*7)%len(words)], i)
}

// RepoPath returns a repository file path for context benchmarks: for
// three draws in four, a file in the folder of one of the first atoms
// generated atoms (so that an atom's patterns may match it), otherwise a
// file no atom is about.
func RepoPath(rng *rand.Rand, atoms int) string {
	name := fmt.Sprintf("%s.%s", words[rng.IntN(len(words))], extensions[rng.IntN(len(extensions))])
	if atoms > 0 && rng.IntN(4) < 3 {
		dir := home(rng.IntN(atoms))
		if rng.IntN(3) == 0 {
			dir += "/" + words[rng.IntN(len(words))]
		}
		return dir + "/" + name
	}
	return fmt.Sprintf("vendor/%s/%s/%s", words[rng.IntN(len(words))], words[rng.IntN(len(words))], name)
}

// pattern returns one glob atom i owns: mostly about its own folder, now
// and then a broader one that overlaps other atoms'.
func pattern(rng *rand.Rand, i int) string {
	h := home(i)
	ext := extensions[rng.IntN(len(extensions))]
	switch rng.IntN(20) {
	case 0:
		return fmt.Sprintf("%s/**/%s*.%s", patternRoots[rng.IntN(len(patternRoots))], words[rng.IntN(len(words))], ext)
	case 1, 2, 3, 4:
		return h + "/**"
	case 5, 6, 7:
		return fmt.Sprintf("%s/*.%s", h, ext)
	case 8, 9:
		return fmt.Sprintf("%s/%s/**", h, words[rng.IntN(len(words))])
	case 10, 11:
		return fmt.Sprintf("%s/**/*_test.%s", h, ext)
	case 12:
		return fmt.Sprintf("%s/{%s,%s}/*", h, words[rng.IntN(len(words))], words[rng.IntN(len(words))])
	default:
		return fmt.Sprintf("%s/%s.%s", h, words[rng.IntN(len(words))], ext)
	}
}

// Generate writes a knowledge base with opts.Nodes leaves into root (a
// repository folder); root/.ai/kenkeep must not exist yet. It returns the
// KB. Index files are not generated: time `kk index rebuild` for that.
func Generate(root string, opts Options) (*store.KB, error) {
	k := store.New(root)
	if _, err := os.Stat(k.Dir); err == nil {
		return nil, fmt.Errorf("%s already exists", k.Dir)
	}
	if err := os.MkdirAll(k.StateDir(), 0o755); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	folders := makeFolders(rng, opts.Nodes)
	vocab := make([]string, 0, 300)
	for i := 0; len(vocab) < 300; i++ {
		w := words[i%len(words)]
		if i >= len(words) {
			w = fmt.Sprintf("%s-%s", w, words[(i/len(words)*7+i)%len(words)])
		}
		vocab = append(vocab, w)
	}
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))

	pick := func() string { return words[rng.IntN(len(words))] }
	if opts.Vocabulary > len(words) {
		vocab := make([]string, opts.Vocabulary)
		for i := range vocab {
			vocab[i] = pseudoWord(i)
		}
		for j, w := range words { // domain words at middle ranks
			vocab[min(len(vocab)-1, 100+j*(opts.Vocabulary/2)/len(words))] = w
		}
		z := rand.NewZipf(rng, 1.07, 1, uint64(len(vocab)-1))
		pick = func() string { return vocab[z.Uint64()] }
	}
	type leaf struct {
		n      *node.Node
		folder string
	}
	leaves := make([]leaf, opts.Nodes+opts.Molecules)
	ids := make([]string, len(leaves))
	for i := range leaves {
		typ := "practice"
		if rng.IntN(5) < 2 || i < opts.Atoms {
			typ = "map"
		}
		if i >= opts.Nodes {
			typ = "molecule"
		}
		title := fmt.Sprintf("%s %s %s %d", strings.ToUpper(words[rng.IntN(len(words))][:1])+words[rng.IntN(len(words))][1:], words[rng.IntN(len(words))], words[rng.IntN(len(words))], i)
		id, err := node.DeriveID(typ, title)
		if err != nil {
			return nil, err
		}
		ids[i] = id
		tags := map[string]bool{}
		for range 2 + rng.IntN(4) {
			tags[vocab[zipf.Uint64()]] = true
		}
		tagList := make([]string, 0, len(tags))
		for t := range tags {
			tagList = append(tagList, t)
		}
		store.SortLocale(tagList)
		folder := folders[rng.IntN(len(folders))]
		leaves[i] = leaf{folder: folder, n: &node.Node{
			Format: node.SchemaVersion, Type: typ, Title: title, ID: id, Tags: tagList, Confidence: "high",
			Description: fmt.Sprintf("How the %s %s handles %s; read before changing it", words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))]),
			DerivedFrom: []string{fmt.Sprintf("docs/%s/%s.md", words[rng.IntN(len(words))], words[rng.IntN(len(words))])},
			Body:        []byte(body(rng, pick)),
		}}
		leaves[i].n.Path = id + ".md"
		if folder != "" {
			leaves[i].n.Path = folder + "/" + id + ".md"
		}
	}
	paths := make(map[string]string, len(leaves))
	for _, l := range leaves {
		paths[l.n.ID] = l.n.Path
	}
	for i := range min(opts.Atoms, opts.Nodes) {
		n := leaves[i].n
		var pats []string
		for range 1 + rng.IntN(20) {
			pats = appendUnique(pats, pattern(rng, i))
		}
		if err := n.SetExtra("kk_paths", pats); err != nil {
			return nil, err
		}
		if opts.Molecules > 0 && rng.IntN(10) < 7 {
			if err := n.SetExtra("kk_molecule", ids[opts.Nodes+rng.IntN(opts.Molecules)]); err != nil {
				return nil, err
			}
		}
		if err := n.SetExtra("kk_version", int64(1)); err != nil {
			return nil, err
		}
	}
	for i, l := range leaves {
		for range rng.IntN(4) {
			if j := rng.IntN(len(ids)); j != i {
				l.n.RelatesTo = appendUnique(l.n.RelatesTo, ids[j])
			}
		}
		if rng.IntN(4) == 0 {
			if j := rng.IntN(len(ids)); j != i {
				l.n.DependsOn = appendUnique(l.n.DependsOn, ids[j])
			}
		}
		data, err := l.n.Render(func(id string) (string, bool) { p, ok := paths[id]; return p, ok })
		if err != nil {
			return nil, err
		}
		p := k.NodePath(l.n.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return nil, err
		}
	}
	summaries := store.Summaries{}
	for _, f := range folders {
		if f != "" && rng.IntN(10) < 8 {
			summaries[f] = fmt.Sprintf("%s and %s knowledge; read before touching %s code", strings.ReplaceAll(f, "/", " "), words[rng.IntN(len(words))], words[rng.IntN(len(words))])
		}
	}
	data, err := store.RenderSummaries(summaries)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(k.SummariesPath(), data, 0o644); err != nil {
		return nil, err
	}
	installed := `{"schema_version": 1, "package": "kk", "version": "bench", "installed_at": "2026-01-01T00:00:00Z", "harnesses": []}` + "\n"
	if err := os.WriteFile(k.InstalledPath(), []byte(installed), 0o644); err != nil {
		return nil, err
	}
	return k, nil
}

// makeFolders returns a folder tree sized for n leaves: about one folder per
// 25 leaves, up to three levels deep, plus the root.
func makeFolders(rng *rand.Rand, n int) []string {
	count := max(1, n/25)
	top := max(1, min(12, count/8+1))
	var out []string
	for i := range top {
		out = append(out, fmt.Sprintf("%s-%d", words[i%len(words)], i))
	}
	for len(out) < count {
		parent := out[rng.IntN(len(out))]
		if strings.Count(parent, "/") >= 2 {
			continue
		}
		out = append(out, fmt.Sprintf("%s/%s-%d", parent, words[rng.IntN(len(words))], len(out)))
	}
	return append(out, "")
}

// pseudoWord is the i-th made-up word of a generated vocabulary.
func pseudoWord(i int) string {
	const consonants, vowels = "bcdfghklmnprstvz", "aeiou"
	var b strings.Builder
	for n := i + 1; n > 0; n /= len(consonants) * len(vowels) {
		r := n % (len(consonants) * len(vowels))
		b.WriteByte(consonants[r%len(consonants)])
		b.WriteByte(vowels[r/len(consonants)])
	}
	b.WriteString("n")
	return b.String()
}

func body(rng *rand.Rand, pick func() string) string {
	var b strings.Builder
	paras := 1 + rng.IntN(4)
	for p := range paras {
		if p > 0 {
			b.WriteString("\n\n")
		}
		for s := range 2 + rng.IntN(4) {
			if s > 0 {
				b.WriteByte(' ')
			}
			ws := 6 + rng.IntN(10)
			for w := range ws {
				word := pick()
				if w == 0 {
					word = strings.ToUpper(word[:1]) + word[1:]
				} else {
					b.WriteByte(' ')
				}
				b.WriteString(word)
			}
			b.WriteByte('.')
		}
	}
	b.WriteByte('\n')
	return b.String()
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// Age sets the modification time of every file under the tree's nodes/ an
// hour back, as a tree checked out a while ago looks: syncs then trust the
// files by their stat instead of re-hashing those written within the
// file system's timestamp granularity.
func Age(k *store.KB) error {
	old := time.Now().Add(-time.Hour)
	return filepath.WalkDir(k.NodesDir(), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			err = os.Chtimes(p, old, old)
		}
		return err
	})
}
