//go:build !unix

package cmd

// raiseOpenFiles does nothing where there is no RLIMIT_NOFILE; 0 means
// unknown.
func raiseOpenFiles() (soft, hard uint64, err error) { return 0, 0, nil }
