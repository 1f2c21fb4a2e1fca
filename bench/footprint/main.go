// Command footprint measures a server's footprint (issue 22 item 5): the
// release binary's size, the start-up time of `outdial serve` on an
// existing database (from exec to the first 200 of /api/v1/health), and
// the CPU it uses while nothing happens (utime+stime of /proc/<pid>/stat,
// in ticks of 10 ms, over -idle from its first healthy answer, and over the
// same window starting -settle later).
//
// Usage, from the repository root (GOTOOLCHAIN as in .ci/run):
//
//	go run ./bench/footprint [-bin FILE] [-runs 21] [-idle 60s] [-settle 5s]
//
// Without -bin it builds the release binary of this tree
// (CGO_ENABLED=0 go build -trimpath -ldflags "-s -w"). The data directory is
// made by one first run of that binary's serve (database created and
// migrated, then stopped with SIGTERM), so every measured start opens an
// existing database. serve runs with its defaults (the metrics listener
// included, on a free port) and a fixed OUTDIAL_SECRET_KEY. It prints the
// three figures: the start-up as the median (and min, max) of -runs starts.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is Linux's USER_HZ, the unit of utime and stime in
// /proc/<pid>/stat (100 on every architecture Go supports there).
const clockTicks = 100

func main() {
	bin := flag.String("bin", "", "outdial binary to measure (default: the release build of this tree)")
	runs := flag.Int("runs", 21, "start-ups measured (the median is reported)")
	idle := flag.Duration("idle", 60*time.Second, "idle window the CPU is measured over")
	settle := flag.Duration("settle", 5*time.Second, "start of the settled idle window after the first healthy answer (0: one window only)")
	flag.Parse()
	log.SetFlags(0)
	if err := run(*bin, *runs, *idle, *settle); err != nil {
		log.Fatal(err)
	}
}

func run(bin string, runs int, idle, settle time.Duration) error {
	work, err := os.MkdirTemp("", "footprint-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if bin == "" {
		bin = filepath.Join(work, "outdial")
		build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build: %w", err)
		}
	}
	st, err := os.Stat(bin)
	if err != nil {
		return err
	}
	fmt.Printf("binary: %s, %.1f MB (%d bytes)\n", bin, float64(st.Size())/1e6, st.Size())

	data := filepath.Join(work, "data")
	first, err := start(bin, data)
	if err != nil {
		return fmt.Errorf("first start: %w", err)
	}
	if err := first.stop(); err != nil {
		return err
	}

	var times, cpus []time.Duration
	for i := 0; i < runs; i++ {
		s, err := start(bin, data)
		if err != nil {
			return err
		}
		times = append(times, s.startup)
		cpus = append(cpus, s.cpu)
		if err := s.stop(); err != nil {
			return err
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	sort.Slice(cpus, func(i, j int) bool { return cpus[i] < cpus[j] })
	fmt.Printf("start-up on an existing database: median %.1f ms (min %.1f, max %.1f, %d runs)\n",
		ms(times[len(times)/2]), ms(times[0]), ms(times[len(times)-1]), runs)

	s, err := start(bin, data)
	if err != nil {
		return err
	}
	defer s.stop() //nolint:errcheck // the measure is printed before
	// The window from the first healthy answer counts what a service does
	// right after it listens (the engine's start, the first uploads sweep);
	// the settled one starts -settle later.
	t0, c0, err := cpuTicks(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("CPU until the first healthy answer: %d ms in ticks; median of the start-ups: %.1f ms (threads' schedstat)\n",
		c0*1000/clockTicks, ms(cpus[len(cpus)/2]))
	t1, c1 := t0, c0
	if settle > 0 {
		time.Sleep(settle)
		if t1, c1, err = cpuTicks(s.cmd.Process.Pid); err != nil {
			return err
		}
	}
	time.Sleep(idle)
	t2, c2, err := cpuTicks(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("CPU from exec to the window's end (the start-up's included): %.3f %% of one core (%d ticks of 10 ms in %.0f s)\n",
		percent(c2, t2.Sub(s.started)), c2, t2.Sub(s.started).Seconds())
	fmt.Printf("idle CPU from the first healthy answer: %.3f %% of one core (%d ticks of 10 ms in %.0f s)\n",
		percent(c2-c0, t2.Sub(t0)), c2-c0, t2.Sub(t0).Seconds())
	if settle > 0 {
		fmt.Printf("idle CPU from %s after it: %.3f %% of one core (%d ticks of 10 ms in %.0f s)\n",
			settle, percent(c2-c1, t2.Sub(t1)), c2-c1, t2.Sub(t1).Seconds())
	}
	return nil
}

// percent is ticks of CPU as a percentage of one core over d.
func percent(ticks int64, d time.Duration) float64 {
	return 100 * float64(ticks) / clockTicks / d.Seconds()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// server is one running serve.
type server struct {
	cmd     *exec.Cmd
	startup time.Duration
	cpu     time.Duration // CPU time of its threads until then
	started time.Time     // when it was executed
}

// start runs serve on data and waits for its first healthy answer.
func start(bin, data string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	metrics, err := freeAddr()
	if err != nil {
		return nil, err
	}
	// Settings by environment: a binary older than the variable ignores it
	// (the first version had no metrics listener nor log level).
	cmd := exec.Command(bin, "serve", "--data", data, "--addr", addr)
	cmd.Env = append(os.Environ(), "OUTDIAL_SECRET_KEY=Zm9vdHByaW50LWJlbmNoLXNlY3JldC1rZXktMzJieXQ=",
		"OUTDIAL_METRICS_ADDR="+metrics, "OUTDIAL_LOG_LEVEL=warn")
	cmd.Stderr = os.Stderr
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, started: t0}
	for deadline := t0.Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
		res, err := client.Get("http://" + addr + "/api/v1/health")
		if err != nil {
			continue
		}
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			s.startup = time.Since(t0)
			s.cpu = threadsCPU(cmd.Process.Pid)
			return s, nil
		}
	}
	s.stop() //nolint:errcheck // already failing
	return nil, errors.New("serve did not answer /api/v1/health within 20 s")
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop() error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		s.cmd.Process.Kill() //nolint:errcheck
		return errors.New("serve did not stop within 15 s of SIGTERM")
	}
}

// cpuTicks returns now and the process's utime+stime (all its threads) in
// clock ticks, from /proc/<pid>/stat.
func cpuTicks(pid int) (time.Time, int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	now := time.Now()
	if err != nil {
		return now, 0, err
	}
	// The command name (field 2) may hold spaces: fields count from the
	// last ')'. utime and stime are fields 14 and 15.
	rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return now, 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return now, 0, err
	}
	return now, utime + stime, nil
}

// threadsCPU returns the CPU time of pid's threads in nanoseconds, the
// first field of each /proc/<pid>/task/<tid>/schedstat (finer than the
// 10 ms ticks of stat, but it misses threads that have exited).
func threadsCPU(pid int) time.Duration {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/schedstat")
	var total int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			total += n
		}
	}
	return time.Duration(total)
}

// freeAddr returns a loopback address with a port free now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
