//go:build race

package prickled

// raceEnabled builds the binary under test with the race detector too.
const raceEnabled = true
