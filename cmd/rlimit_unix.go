//go:build unix

package cmd

import "syscall"

// raiseOpenFiles raises the soft RLIMIT_NOFILE to the hard limit (Go's
// runtime already moves it to hard − 1 at start; this takes the last one and
// makes the value explicit in the log) and returns the soft and hard limits
// now in force.
func raiseOpenFiles() (soft, hard uint64, err error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0, err
	}
	if lim.Cur < lim.Max {
		want := lim
		want.Cur = want.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
			// macOS refuses RLIM_INFINITY as a soft limit; keep what Go set.
			return uint64(lim.Cur), uint64(lim.Max), err //nolint:gosec // limits are positive
		}
		lim = want
	}
	return uint64(lim.Cur), uint64(lim.Max), nil //nolint:gosec // limits are positive
}
