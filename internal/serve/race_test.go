//go:build race

package serve

// raceEnabled: the race detector slows a search over large notes
// tenfold, and adds its own memory; memory bounds are measured without it.
const raceEnabled = true
