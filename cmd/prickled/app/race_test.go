//go:build race

package app

// raceEnabled builds the binary under test with the race detector too.
const raceEnabled = true
