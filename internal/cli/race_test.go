//go:build race

package cli

// raceEnabled: the race detector multiplies a process's memory, so memory
// bounds are looser under it.
const raceEnabled = true
