// Command kk-gentree writes a synthetic knowledge base for benchmarks:
//
//	kk-gentree -n 10000 -seed 1 DIR
//	kk-gentree -n 9900 -atoms 5000 -molecules 100 -vocabulary 5000 -paths paths.txt DIR
//
// DIR becomes a repository folder holding .ai/kenkeep with n leaves (plus
// the molecules). With -atoms, that many of them own 1–20 path patterns;
// -paths writes 100 repository file paths for context lookups, one per
// line, most of them in some atom's folder.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/kk-project/kk/internal/benchtree"
)

func main() {
	n := flag.Int("n", 1000, "number of leaves")
	seed := flag.Uint64("seed", 1, "random seed")
	atoms := flag.Int("atoms", 0, "how many of the leaves are atoms with path patterns")
	molecules := flag.Int("molecules", 0, "molecules to add, grouping most atoms")
	vocabulary := flag.Int("vocabulary", 0, "distinct body words, Zipf-distributed (default: 56 words, uniform)")
	paths := flag.String("paths", "", "write 100 repository paths for context lookups to this file")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: kk-gentree [-n N] [-seed S] [-atoms A] [-molecules M] [-vocabulary V] [-paths FILE] DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *n < 1 || *atoms < 0 || *atoms > *n || *molecules < 0 || *vocabulary < 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), benchtree.Options{Nodes: *n, Seed: *seed, Atoms: *atoms, Molecules: *molecules, Vocabulary: *vocabulary}, *paths); err != nil {
		fmt.Fprintln(os.Stderr, "kk-gentree:", err)
		os.Exit(1)
	}
}

func run(dir string, o benchtree.Options, pathsFile string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := benchtree.Generate(dir, o); err != nil {
		return err
	}
	if pathsFile == "" {
		return nil
	}
	rng := rand.New(rand.NewPCG(o.Seed, 11))
	var b strings.Builder
	for range 100 {
		b.WriteString(benchtree.RepoPath(rng, o.Atoms) + "\n")
	}
	return os.WriteFile(pathsFile, []byte(b.String()), 0o644)
}
