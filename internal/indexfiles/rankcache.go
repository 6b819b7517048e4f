package indexfiles

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// The rank cache (.state/rank.cache) keeps, for every tag, the first
// byTopicMax leaves of its "By topic" ranking and a fingerprint of what
// that ranking is computed from, so that a command that generates once
// (kk node write) ranks again only the cohorts its change touched.
//
// A tag's ranking depends only on its cohort, the leaves carrying it: a
// member's score is its similarity to the other members (over their whole
// tag sets), and ties are broken by in-degree, title and path. The
// fingerprint covers every member's path and content hash (which fix its
// tags and title) and in-degree, in tree order. A stale tag is ranked
// over its cohort alone, which gives exactly what ranking the whole tree
// gives it (centralityScores counts, for a member's score in t, only
// leaves carrying t). The file is a cache: anything wrong with it only
// costs a ranking from scratch.

const rankCacheMagic = "kk-rank-cache 1"

func rankCachePath(k *store.KB) string { return filepath.Join(k.StateDir(), "rank.cache") }

type rankEntry struct {
	fp  string
	ids []string
}

func loadRankCache(path string) map[string]rankEntry {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	if !sc.Scan() || sc.Text() != rankCacheMagic {
		return nil
	}
	out := map[string]rankEntry{}
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 2 {
			return nil
		}
		tag, err := strconv.Unquote(f[1])
		if err != nil {
			return nil
		}
		e := rankEntry{fp: f[0]}
		for _, q := range f[2:] {
			id, err := strconv.Unquote(q)
			if err != nil {
				return nil
			}
			e.ids = append(e.ids, id)
		}
		out[tag] = e
	}
	if sc.Err() != nil {
		return nil
	}
	return out
}

func saveRankCache(path string, tags []string, fps map[string]string, ranked map[string][]*node.Node) {
	var b bytes.Buffer
	b.WriteString(rankCacheMagic + "\n")
	for _, t := range tags {
		b.WriteString(fps[t])
		b.WriteByte('\t')
		b.WriteString(strconv.Quote(t))
		for _, n := range ranked[t] {
			b.WriteByte('\t')
			b.WriteString(strconv.Quote(n.ID))
		}
		b.WriteByte('\n')
	}
	if os.MkdirAll(filepath.Dir(path), 0o755) == nil {
		_ = atomicfile.Replace(path, b.Bytes(), 0o644)
	}
}

// rankCached is rankCohorts(leaves, inDegree), taking the
// rankings of unchanged cohorts from the rank cache at path and writing
// the cache again when a cohort changed.
func rankCached(path string, leaves []*node.Node, hash func(*node.Node) string, byID func(string) (*node.Node, bool), inDegree map[string]int) map[string][]*node.Node {
	var tags []string
	cohorts := map[string][]*node.Node{}
	for _, n := range leaves {
		for i, t := range n.Tags {
			if slices.Contains(n.Tags[:i], t) {
				continue
			}
			if _, ok := cohorts[t]; !ok {
				tags = append(tags, t)
			}
			cohorts[t] = append(cohorts[t], n)
		}
	}
	fps := make(map[string]string, len(tags))
	var line []byte
	for _, t := range tags {
		h := sha256.New()
		h.Write([]byte(generatorVersion + "\n"))
		for _, n := range cohorts[t] {
			line = append(line[:0], n.Path...)
			line = append(line, 0)
			line = append(line, hash(n)...)
			line = append(line, 0)
			line = strconv.AppendInt(line, int64(inDegree[n.ID]), 10)
			line = append(line, '\n')
			h.Write(line)
		}
		fps[t] = hex.EncodeToString(h.Sum(nil))
	}
	old := loadRankCache(path)
	out := make(map[string][]*node.Node, len(tags))
	var stale []string
	staleMembers := 0
tags:
	for _, t := range tags {
		if e, ok := old[t]; ok && e.fp == fps[t] {
			top := make([]*node.Node, 0, len(e.ids))
			for _, id := range e.ids {
				n, ok := byID(id)
				if !ok {
					stale = append(stale, t)
					staleMembers += len(cohorts[t])
					continue tags
				}
				top = append(top, n)
			}
			out[t] = top
			continue
		}
		stale = append(stale, t)
		staleMembers += len(cohorts[t])
	}
	if staleMembers*2 > len(leaves) {
		full := rankCohorts(leaves, inDegree)
		for _, t := range stale {
			out[t] = full[t]
		}
	} else {
		for _, t := range stale {
			out[t] = rankCohorts(cohorts[t], inDegree)[t]
		}
	}
	if len(stale) > 0 || len(old) != len(tags) {
		saveRankCache(path, tags, fps, out)
	}
	return out
}
