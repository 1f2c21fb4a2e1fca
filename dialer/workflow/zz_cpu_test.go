package workflow

import (
	"runtime/debug"
	"syscall"
	"testing"
	"time"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func measure(n int, f func()) (cpu, wall time.Duration) {
	c0, w0 := cpuNow(), time.Now()
	for range n {
		f()
	}
	return (cpuNow() - c0) / time.Duration(n), time.Since(w0) / time.Duration(n)
}

func TestTmpCPU(t *testing.T) {
	raw := bigDefinition(10_000, 20_000)
	parsed, _ := Parse(raw)
	both := func() { d, _ := Parse(raw); Validate(d) }
	for round := 0; round < 4; round++ {
		c1, w1 := measure(15, both)
		old := debug.SetGCPercent(-1)
		c2, w2 := measure(15, both)
		debug.SetGCPercent(old)
		c3, w3 := measure(15, func() { Parse(raw) })
		c4, w4 := measure(15, func() { Validate(parsed) })
		t.Logf("p+v cpu %5.1fms wall %5.1fms | noGC cpu %5.1f wall %5.1f | parse cpu %5.1f wall %5.1f | validate cpu %5.1f wall %5.1f",
			ms(c1), ms(w1), ms(c2), ms(w2), ms(c3), ms(w3), ms(c4), ms(w4))
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
