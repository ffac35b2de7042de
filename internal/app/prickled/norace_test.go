//go:build !race

package prickled

const raceEnabled = false
