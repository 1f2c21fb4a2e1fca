//go:build linux || darwin || freebsd

package diskspace

import (
	"fmt"
	"syscall"
)

// Statfs returns a UsageFunc measuring the filesystem that holds dir with
// statfs(2) on every call (a few microseconds; nothing is cached, so space
// freed or used by anybody is seen at once).
func Statfs(dir string) UsageFunc {
	return func() (Usage, error) {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			return Usage{}, fmt.Errorf("statfs %s: %w", dir, err)
		}
		bsize := uint64(st.Bsize) //nolint:gosec // a block size is positive
		return Usage{Free: uint64(st.Bavail) * bsize, Total: uint64(st.Blocks) * bsize}, nil
	}
}
