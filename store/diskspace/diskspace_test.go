package diskspace

import (
	"errors"
	"testing"
)

func TestDefaultReserve(t *testing.T) {
	for _, tc := range []struct{ total, want uint64 }{
		{0, 0},
		{10 << 30, 512 << 20}, // 5 % of 10 GiB
		{20 << 30, 1 << 30},   // 5 % = 1 GiB exactly
		{500 << 30, 1 << 30},  // capped
		{100 << 20, 5 << 20},  // a 100 MiB filesystem keeps 5 MiB
		{1 << 40, DefaultReserveMax},
	} {
		if got := DefaultReserve(tc.total); got != tc.want {
			t.Errorf("DefaultReserve(%d) = %d, want %d", tc.total, got, tc.want)
		}
	}
}

func TestReserveCheck(t *testing.T) {
	free := uint64(0)
	usage := func() (Usage, error) { return Usage{Free: free, Total: 100 << 30}, nil }
	r := NewReserve(usage, 1<<30)
	for _, tc := range []struct {
		name   string
		free   uint64
		need   int64
		refuse bool
		msg    string
	}{
		{"plenty", 10 << 30, 0, false, ""},
		{"exactly the reserve", 1 << 30, 0, false, ""},
		{"below", 900 << 20, 0, true, "insufficient storage: 900 MiB free, below the 1 GiB reserve"},
		{"a file that fits", 2 << 30, 512 << 20, false, ""},
		{"a file that would cut into the reserve", 1<<30 + 100<<20, 256 << 20, true,
			"insufficient storage: 1.1 GiB free; 256 MiB more would leave less than the 1 GiB reserve"},
		{"a file larger than what is free", 100 << 20, 256 << 20, true, "insufficient storage: 100 MiB free, below the 1 GiB reserve"},
		{"negative need counts as 0", 2 << 30, -5, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			free = tc.free
			err := r.Check(tc.need)
			if got := IsLowSpace(err); got != tc.refuse {
				t.Fatalf("Check(%d) with %d free = %v, want refused %v", tc.need, tc.free, err, tc.refuse)
			}
			if tc.refuse && err.Error() != tc.msg {
				t.Errorf("message = %q, want %q", err.Error(), tc.msg)
			}
		})
	}
}

func TestReserveOff(t *testing.T) {
	calls := 0
	usage := func() (Usage, error) { calls++; return Usage{}, nil }
	var nilReserve *Reserve
	for _, r := range []*Reserve{nilReserve, NewReserve(usage, 0), NewReserve(nil, 1<<30)} {
		if err := r.Check(1 << 40); err != nil {
			t.Errorf("Check on a disabled reserve = %v", err)
		}
	}
	if calls != 0 {
		t.Errorf("a disabled reserve measured the disk %d times", calls)
	}
}

func TestReserveUsageError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReserve(func() (Usage, error) { return Usage{}, boom }, 1)
	if err := r.Check(0); !errors.Is(err, boom) || IsLowSpace(err) {
		t.Fatalf("Check = %v, want the usage error, not a low-space error", err)
	}
}

func TestStatfs(t *testing.T) {
	u, err := Statfs(t.TempDir())()
	if err != nil {
		t.Skipf("statfs unavailable: %v", err)
	}
	if u.Total == 0 || u.Free > u.Total {
		t.Fatalf("Statfs = %+v", u)
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[uint64]string{
		0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 256 << 20: "256 MiB",
		1<<30 + 100<<20: "1.1 GiB", 2 << 40: "2 TiB", 3 << 50: "3 PiB",
	} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}
