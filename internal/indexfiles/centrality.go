package indexfiles

import (
	"github.com/kk-project/kk/internal/store"
	"math"
	"math/bits"
	"slices"
)

// Tag centrality drives each folder's "By topic" block: for a tag t, every
// leaf carrying t is scored by the sum of its tag-set Jaccard similarity
// |A∩B|/|A∪B| to every other leaf carrying t. Done pair by pair this is
// quadratic in the size of the largest tag cohort, and one tag on nearly
// every leaf (a project name) is common; at 10,000 leaves that is 10^8
// set intersections.
//
// The scores are computed exactly without visiting pairs. A pair's Jaccard
// depends only on k = |A∩B| and the two set sizes, so it is enough to know,
// for each leaf A and tag t, how many leaves B of each size m share exactly
// k tags with A (t among them), X_k. Counting the leaves that contain each
// subset T of A's tags with t ∈ T, and summing over the subsets of size j,
// gives Y_j = Σ_k C(k-1, j-1)·X_k (T holds t and j-1 of the other k-1
// shared tags); binomial inversion recovers X_k = Σ_j (-1)^(j-k)·C(j-1, k-1)·Y_j. Each leaf costs 2^|tags| map
// operations, so leaves with more than maxSubsetTags tags are handled pair
// by pair instead.

const maxSubsetTags = 12

// subsetKey combines a subset's hash (the XOR of its tags' random words)
// with the number of tags of the leaf holding it.
func subsetKey(hash uint64, size int) uint64 {
	return hash ^ uint64(size)*0x9E3779B97F4A7C15
}

// centralityScores returns, for every leaf index i and every tag id in
// sets[i], the centrality of leaf i in that tag's cohort, in the order of
// sets[i]. sets are sorted, duplicate-free tag ids.
func centralityScores(sets [][]int, tagCount int) [][]float64 {
	zob := make([]uint64, tagCount)
	seed := uint64(0x9E3779B97F4A7C15)
	for i := range zob {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		zob[i] = seed
	}
	counts := map[uint64]int32{}
	sizes := map[int]bool{}
	var big []int
	bigByTag := make([][]int, tagCount)
	for i, s := range sets {
		if len(s) > maxSubsetTags {
			big = append(big, i)
			for _, t := range s {
				bigByTag[t] = append(bigByTag[t], i)
			}
			continue
		}
		if len(s) == 0 {
			continue
		}
		sizes[len(s)] = true
		hashes := subsetHashes(s, zob)
		for mask := 1; mask < len(hashes); mask++ {
			counts[subsetKey(hashes[mask], len(s))]++
		}
	}
	sizeList := make([]int, 0, len(sizes))
	for m := range sizes {
		sizeList = append(sizeList, m)
	}
	slices.Sort(sizeList)

	cohort := make([][]int, tagCount) // only needed for big leaves
	if len(big) > 0 {
		for i, s := range sets {
			for _, t := range s {
				cohort[t] = append(cohort[t], i)
			}
		}
	}
	out := make([][]float64, len(sets))
	store.Parallel(len(sets), func(i int) {
		s := sets[i]
		scores := make([]float64, len(s))
		out[i] = scores
		if len(s) == 0 {
			return
		}
		if len(s) > maxSubsetTags {
			for p, t := range s {
				sum := 0.0
				for _, b := range cohort[t] {
					if b != i {
						sum += jaccard(s, sets[b])
					}
				}
				scores[p] = roundScore(sum)
			}
			return
		}
		a := len(s)
		hashes := subsetHashes(s, zob)
		// y[p][m][j]: leaves of size sizeList[m] containing a j-subset of s
		// that includes s[p], summed over those subsets.
		y := make([][][]float64, a)
		for p := range y {
			y[p] = make([][]float64, len(sizeList))
			for m := range y[p] {
				y[p][m] = make([]float64, a+1)
			}
		}
		for mask := 1; mask < len(hashes); mask++ {
			j := bits.OnesCount(uint(mask))
			for m, size := range sizeList {
				if size < j {
					continue
				}
				c := counts[subsetKey(hashes[mask], size)]
				if c == 0 {
					continue
				}
				for rest := mask; rest != 0; rest &= rest - 1 {
					y[bits.TrailingZeros(uint(rest))][m][j] += float64(c)
				}
			}
		}
		for p, t := range s {
			sum := 0.0
			for m, size := range sizeList {
				for k := 1; k <= min(a, size); k++ {
					x := 0.0
					for j := k; j <= a; j++ {
						term := binom(j-1, k-1) * y[p][m][j]
						if (j-k)%2 == 1 {
							term = -term
						}
						x += term
					}
					if x != 0 {
						sum += x * float64(k) / float64(a+size-k)
					}
				}
			}
			sum-- // the leaf itself: k = a = m, similarity 1
			for _, b := range bigByTag[t] {
				sum += jaccard(s, sets[b])
			}
			scores[p] = roundScore(sum)
		}
	})
	return out
}

// subsetHashes returns the hash of every subset of s, indexed by bit mask.
func subsetHashes(s []int, zob []uint64) []uint64 {
	h := make([]uint64, 1<<len(s))
	for mask := 1; mask < len(h); mask++ {
		low := bits.TrailingZeros(uint(mask))
		h[mask] = h[mask&(mask-1)] ^ zob[s[low]]
	}
	return h
}

func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return math.Round(r)
}

// roundScore drops floating point noise so that scores that are equal in
// exact arithmetic compare equal whatever order they were summed in.
func roundScore(s float64) float64 { return math.Round(s*1e9) / 1e9 }

// shared is |a ∩ b| for sorted sets.
func shared(a, b []int) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			n++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return n
}

// jaccard is |a∩b| / |a∪b| for sorted, duplicate-free sets.
func jaccard(a, b []int) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := shared(a, b)
	return float64(inter) / float64(len(a)+len(b)-inter)
}
