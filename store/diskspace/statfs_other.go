//go:build !(linux || darwin || freebsd)

package diskspace

import "errors"

// Statfs returns a UsageFunc that always fails: this platform has no
// statfs(2) here, and the service runs without a disk reserve.
func Statfs(string) UsageFunc {
	return func() (Usage, error) { return Usage{}, errors.New("free disk space is not measured on this platform") }
}
