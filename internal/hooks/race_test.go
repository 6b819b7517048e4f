//go:build race

package hooks

// raceEnabled: the race detector multiplies a process's memory, so memory
// limits are not measured under it (scripts/test.sh runs those tests
// again without it).
const raceEnabled = true
