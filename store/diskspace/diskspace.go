// Package diskspace measures the free space of the filesystem that holds
// Outdial's data directory and enforces a reserve on it: work that can wait
// (a contacts upload, a campaign import) is refused while free space is
// below the reserve, so that the dialer's own small writes (call outcomes,
// attempts, logs) always find room.
//
// The free-space source is a plain function ([UsageFunc]) so that tests
// inject any figure instead of filling a disk.
package diskspace

import (
	"errors"
	"fmt"
)

// Usage is the size and the free space of a filesystem, in bytes. Free is
// what an unprivileged process may still write (statfs f_bavail), not
// counting the blocks the filesystem keeps for root.
type Usage struct {
	Free  uint64
	Total uint64
}

// UsageFunc reports the current usage of one filesystem.
type UsageFunc func() (Usage, error)

// Defaults of the reserve: the smaller of DefaultReserveMax and
// DefaultReservePercent of the filesystem's size.
const (
	DefaultReserveMax     uint64 = 1 << 30 // 1 GiB
	DefaultReservePercent uint64 = 5
)

// DefaultReserve returns the default reserve of a filesystem of total
// bytes: the smaller of 1 GiB and 5 % of it.
func DefaultReserve(total uint64) uint64 {
	// total/100*p + (total%100)*p/100: exact, and no overflow near 2^64.
	return min(DefaultReserveMax, total/100*DefaultReservePercent+total%100*DefaultReservePercent/100)
}

// Reserve refuses work while free space is below a number of bytes. A nil
// *Reserve, or one of zero bytes, refuses nothing. It is safe for
// concurrent use.
type Reserve struct {
	usage UsageFunc
	bytes uint64
}

// NewReserve returns a Reserve of bytes on the filesystem usage measures.
func NewReserve(usage UsageFunc, bytes uint64) *Reserve {
	return &Reserve{usage: usage, bytes: bytes}
}

// Bytes returns the reserve in bytes (0 for a nil Reserve).
func (r *Reserve) Bytes() uint64 {
	if r == nil {
		return 0
	}
	return r.bytes
}

// Check returns a *LowSpaceError when writing need more bytes (0 for "some
// small write") would leave less than the reserve free: free − need <
// reserve. An error measuring the filesystem is returned as is; callers
// decide whether to fail open.
func (r *Reserve) Check(need int64) error {
	if r == nil || r.bytes == 0 || r.usage == nil {
		return nil
	}
	u, err := r.usage()
	if err != nil {
		return fmt.Errorf("measure free disk space: %w", err)
	}
	n := uint64(max(need, 0))
	if u.Free < n || u.Free-n < r.bytes {
		return &LowSpaceError{Free: u.Free, Reserve: r.bytes, Need: n}
	}
	return nil
}

// LowSpaceError reports that free space is, or would be after a write of
// Need bytes, below the reserve.
type LowSpaceError struct {
	Free    uint64 // free bytes now
	Reserve uint64 // the reserve
	Need    uint64 // bytes the refused work would write (0: any write)
}

// Error says how much is free and the reserve, in the words of the 507
// answers: "insufficient storage: 900 MiB free, below the 1 GiB reserve", or
// with a size: "insufficient storage: 1.1 GiB free; 256 MiB more would leave
// less than the 1 GiB reserve".
func (e *LowSpaceError) Error() string {
	if e.Need == 0 || e.Free < e.Reserve {
		return fmt.Sprintf("insufficient storage: %s free, below the %s reserve", Format(e.Free), Format(e.Reserve))
	}
	return fmt.Sprintf("insufficient storage: %s free; %s more would leave less than the %s reserve",
		Format(e.Free), Format(e.Need), Format(e.Reserve))
}

// IsLowSpace reports whether err is or wraps a *LowSpaceError.
func IsLowSpace(err error) bool {
	var le *LowSpaceError
	return errors.As(err, &le)
}

// Format writes a byte count with a binary unit and at most one decimal,
// dropping ".0": 512 B, 1 KiB, 1.5 MiB, 2 GiB, 1.2 TiB.
func Format(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	s := fmt.Sprintf("%.1f", float64(n)/float64(div))
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s + " " + string("KMGTP"[exp]) + "iB"
}
