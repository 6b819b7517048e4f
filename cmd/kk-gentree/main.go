// Command kk-gentree writes a synthetic knowledge base for benchmarks:
//
//	kk-gentree -n 10000 -seed 1 DIR
//
// DIR becomes a repository folder holding .ai/kenkeep with n leaves.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kk-project/kk/internal/benchtree"
)

func main() {
	n := flag.Int("n", 1000, "number of leaves")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: kk-gentree [-n N] [-seed S] DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *n < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := os.MkdirAll(flag.Arg(0), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "kk-gentree:", err)
		os.Exit(1)
	}
	if _, err := benchtree.Generate(flag.Arg(0), benchtree.Options{Nodes: *n, Seed: *seed}); err != nil {
		fmt.Fprintln(os.Stderr, "kk-gentree:", err)
		os.Exit(1)
	}
}
