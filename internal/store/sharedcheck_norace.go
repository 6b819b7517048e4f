//go:build !race

package store

// raceChecks turns on, in builds with the race detector (the test suite),
// the memo's check that no caller changes a leaf it shares (see Tree).
const raceChecks = false
