package realbin

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ClockTicks is the unit of /proc/<pid>/stat times (sysconf(_SC_CLK_TCK)).
var ClockTicks = func() float64 {
	if out, err := exec.Command("getconf", "CLK_TCK").Output(); err == nil {
		if n, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64); err == nil && n > 0 {
			return n
		}
	}
	return 100
}()

// ProcCPU returns the user + system CPU time process pid has used
// (/proc/<pid>/stat); an unreadable file is fatal.
func ProcCPU(pid int) time.Duration {
	d, err := TryProcCPU(pid)
	if err != nil {
		log.Fatalf("%v (the benchmarks need Linux)", err)
	}
	return d
}

// TryProcCPU is ProcCPU returning the error (the process may have exited)
// instead of exiting.
func TryProcCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read /proc/%d/stat: %w", pid, err)
	}
	// The command name may hold spaces: the fields start after its ')'.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return time.Duration((utime + stime) / ClockTicks * float64(time.Second)), nil
}

// ProcStatusKB returns a kB field of /proc/<pid>/status (VmRSS, VmHWM); an
// unreadable file or a missing field is fatal.
func ProcStatusKB(pid int, field string) int64 {
	n, err := TryProcStatusKB(pid, field)
	if err != nil {
		log.Fatal(err)
	}
	return n
}

// TryProcStatusKB is ProcStatusKB returning the error (the process may
// have exited) instead of exiting.
func TryProcStatusKB(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read /proc/%d/status: %w", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n, nil
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}

// MachineBusy returns the CPU time all CPUs spent busy (user, nice,
// system, irq, softirq, steal) from /proc/stat; 0 when unreadable.
func MachineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	var ticks float64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		if i < len(f) {
			v, _ := strconv.ParseFloat(f[i], 64)
			ticks += v
		}
	}
	return time.Duration(ticks / ClockTicks * float64(time.Second))
}

// SelfCPU returns this process's user + system CPU time.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// LoadAvg returns the 1-minute load average ("?" when unreadable): other
// work on the machine slows a run down.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// RSSSampler reads a process's VmRSS at an interval and keeps the peak.
type RSSSampler struct {
	stop chan struct{}
	done chan struct{}
	peak int64 // kB
}

// SampleRSS reads process pid's VmRSS now and then every interval until
// End (a read that fails, the process having exited, is skipped).
func SampleRSS(pid int, interval time.Duration) *RSSSampler {
	s := &RSSSampler{stop: make(chan struct{}), done: make(chan struct{})}
	s.peak, _ = TryProcStatusKB(pid, "VmRSS")
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if kb, err := TryProcStatusKB(pid, "VmRSS"); err == nil {
				s.peak = max(s.peak, kb)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// End stops sampling and returns the peak VmRSS in kB.
func (s *RSSSampler) End() int64 {
	close(s.stop)
	<-s.done
	return s.peak
}
