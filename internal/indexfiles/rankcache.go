package indexfiles

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
)

// The branch index records, for every tag, the first byTopicMax leaves
// of its "By topic" ranking and a fingerprint of what that ranking is
// computed from (index.Ranked), so that a command that generates once
// (kk node write) ranks again only the cohorts its change touched.
//
// A tag's ranking depends only on its cohort, the leaves carrying it: a
// member's score is its similarity to the other members (over their whole
// tag sets), and ties are broken by in-degree, title and path. The
// fingerprint covers every member's path and content hash (which fix its
// tags and title) and in-degree, in tree order. A stale tag is ranked
// over its cohort alone, which gives exactly what ranking the whole tree
// gives it (centralityScores counts, for a member's score in t, only
// leaves carrying t). Anything wrong with the record only costs a ranking
// from scratch.

// rankRecord is the rankings the branch index records, read for one
// generation, and what that generation changes of them.
type rankRecord struct {
	old  map[string]index.Ranked
	put  map[string]index.Ranked // rankings made again
	drop []string                // tags no leaf carries any more
	used bool                    // the generation ranked through it
}

// cohortFP is the fingerprint of a tag's cohort (its members in tree
// order): every member's path, content hash and in-degree.
func cohortFP(members []*node.Node, hash func(*node.Node) string, inDegree map[string]int) string {
	h := sha256.New()
	h.Write([]byte(generatorVersion + "\n"))
	var line []byte
	for _, n := range members {
		line = append(line[:0], n.Path...)
		line = append(line, 0)
		line = append(line, hash(n)...)
		line = append(line, 0)
		line = strconv.AppendInt(line, int64(inDegree[n.ID]), 10)
		line = append(line, '\n')
		h.Write(line)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// topIDs are the ids of ranked leaves.
func topIDs(top []*node.Node) []string {
	ids := make([]string, len(top))
	for i, n := range top {
		ids[i] = n.ID
	}
	return ids
}

// loadRanks reads db's recorded rankings (none without db).
func loadRanks(ctx context.Context, db *index.DB) *rankRecord {
	rr := &rankRecord{put: map[string]index.Ranked{}}
	if db != nil {
		rr.old, _ = db.Ranks(ctx, nil)
	}
	return rr
}

// rankCached is rankCohorts(leaves, inDegree), taking the rankings of
// unchanged cohorts from rr and noting in it those ranked again.
func rankCached(rr *rankRecord, leaves []*node.Node, hash func(*node.Node) string, byID func(string) (*node.Node, bool), inDegree map[string]int) map[string][]*node.Node {
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
	for _, t := range tags {
		fps[t] = cohortFP(cohorts[t], hash, inDegree)
	}
	rr.used = true
	old := rr.old
	out := make(map[string][]*node.Node, len(tags))
	var stale []string
	staleMembers := 0
tags:
	for _, t := range tags {
		if e, ok := old[t]; ok && e.FP == fps[t] {
			top := make([]*node.Node, 0, len(e.IDs))
			for _, id := range e.IDs {
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
	for _, t := range stale {
		rr.put[t] = index.Ranked{FP: fps[t], IDs: topIDs(out[t])}
	}
	for t := range old {
		if _, ok := cohorts[t]; !ok {
			rr.drop = append(rr.drop, t)
		}
	}
	return out
}
