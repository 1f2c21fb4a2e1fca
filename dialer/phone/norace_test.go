//go:build !race

package phone

// raceEnabled reports whether the race detector is on; slow exhaustive
// tests shrink under it.
const raceEnabled = false
