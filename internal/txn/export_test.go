package txn

// CountNodesResolutions counts, until the returned function is called,
// how often a transaction resolves the links of the folder nodes (the
// symlink guard's root), and reports the count.
func CountNodesResolutions(nodes string) (stop func() int) {
	n := 0
	prev := evalSymlinks
	evalSymlinks = func(p string) (string, error) {
		if p == nodes {
			n++
		}
		return prev(p)
	}
	return func() int {
		evalSymlinks = prev
		return n
	}
}
