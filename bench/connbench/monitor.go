package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/outdial/outdial/bench/internal/realbin"
)

// monitor samples the service's RSS and open file descriptors.
type monitor struct {
	pid          int
	mu           sync.Mutex
	rss, rssPeak int64
	fds, fdsPeak int
}

func (m *monitor) run() {
	for {
		rss, err := realbin.TryProcStatusKB(m.pid, "VmRSS")
		if err != nil {
			return
		}
		fds := countFDs(m.pid)
		m.mu.Lock()
		m.rss, m.rssPeak = rss, max(m.rssPeak, rss)
		m.fds, m.fdsPeak = fds, max(m.fdsPeak, fds)
		m.mu.Unlock()
		time.Sleep(200 * time.Millisecond)
	}
}

func (m *monitor) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rssPeak, m.fdsPeak = m.rss, m.fds
}

func (m *monitor) figures() (rss, rssPeak int64, fds, fdsPeak int, hwm int64) {
	hwm, _ = realbin.TryProcStatusKB(m.pid, "VmHWM")
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rss, m.rssPeak, m.fds, m.fdsPeak, hwm
}

func countFDs(pid int) int {
	d, err := os.Open(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	return len(names)
}

// listenOverflows returns the machine's count of connections dropped
// because a listener's accept queue was full (/proc/net/netstat TcpExt
// ListenOverflows).
func listenOverflows() int64 {
	b, err := os.ReadFile("/proc/net/netstat")
	if err != nil {
		return 0
	}
	lines := strings.Split(string(b), "\n")
	for i := 0; i+1 < len(lines); i += 2 {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) == 0 || names[0] != "TcpExt:" || len(values) != len(names) {
			continue
		}
		for j, n := range names {
			if n == "ListenOverflows" {
				var v int64
				fmt.Sscan(values[j], &v)
				return v
			}
		}
	}
	return 0
}

// findLine returns the first line of b containing s.
func findLine(b []byte, s string) string {
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			return sc.Text()
		}
	}
	return ""
}

// sumField adds the integer field name=N of every log line containing msg.
func sumField(b []byte, msg, name string) int64 {
	re := regexp.MustCompile(`\b` + name + `=(\d+)`)
	var total int64
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if !strings.Contains(sc.Text(), msg) {
			continue
		}
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			var v int64
			fmt.Sscan(m[1], &v)
			total += v
		}
	}
	return total
}
