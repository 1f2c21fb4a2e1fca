// Command connbench reproduces issue 16's connection-holding attack on the
// real binary and measures whether the service still answers: N hostile
// clients (default 20,000), with no API key, each send a complete request
// head with a Content-Length and never the body, and open a new connection
// the moment the service closes theirs, so that N are always held or being
// opened. Meanwhile a probe opens a fresh connection every -probe-every for
// GET /api/v1/health and for an authenticated GET /api/v1/workflow, and
// times each answer.
//
//	go run ./bench/connbench                          # 20,000 on the webhooks
//	go run ./bench/connbench -target mix              # webhooks, API, health, object store in turn
//	go run ./bench/connbench -bin /tmp/old-outdial -serve-args=""   # a binary without the limits
//	go run ./bench/connbench -target streams          # one API key opens event streams on every connection (issue 20)
//
// It builds the binary (or takes -bin) and starts `outdial serve` on a
// fresh data directory with this process's original open-files limit. The
// hostile connections are held by copies of this program (-holder), as many
// as the open-files limit requires: each raises its own RLIMIT_NOFILE (soft
// to hard, and hard too when allowed) and holds its share, spread over the
// source addresses 127.0.0.2–127.0.0.9 (loopback) so that ephemeral ports
// never run out. Phases: a baseline without load, the ramp while the N
// connections are being opened (until 95 % are open, at most a minute),
// and a steady phase of -duration.
//
// Reported per phase: probe latencies (count, p50, p99, max, share within
// 1 s, failures) for health and the authenticated GET; the hostile side's
// connections (open, closed by the service, dial errors); the service's
// RSS (VmRSS, peak sampled, and VmHWM) and open file descriptors
// (/proc/<pid>/fd, peak sampled); and the service's own count of shed
// connections from its log. Linux only (/proc).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/outdial/outdial/bench/internal/realbin"
)

func main() {
	n := flag.Int("conns", 20000, "hostile connections to hold")
	target := flag.String("target", "webhook", "what the hostile requests ask for: webhook (provider status webhook, reads its body), mix (webhook, API, health and object store in turn), streams (GET /api/v1/events with one API key of another organization than the probe's, read for as long as it lasts)")
	duration := flag.Duration("duration", 20*time.Second, "steady phase with all connections held")
	probeEvery := flag.Duration("probe-every", 250*time.Millisecond, "time between two probes of each kind (health, the authenticated GET)")
	bin := flag.String("bin", "", "outdial binary to run (default: go build into a temporary directory)")
	serveArgs := flag.String("serve-args", "--log-level info --log-format text", "extra serve flags, space-separated")
	keep := flag.Bool("keep", false, "keep the temporary directory (data, service log)")
	reopen := flag.Bool("reopen", true, "open a new connection as soon as the service closes one (false: open N once, as in the issue's test)")
	holder := flag.String("holder", "", "internal: hold -conns connections to this address and report on stdout")
	first := flag.Int("first", 0, "internal: index of the holder's first connection")
	streamKey := flag.String("stream-key", "", "internal: the API key of -target streams")
	flag.Parse()
	log.SetFlags(0)
	if *holder != "" {
		runHolder(*holder, *target, *streamKey, *n, *first, *reopen)
		return
	}

	tmp, binary, cleanup, err := realbin.Workdir("connbench", *keep, *bin)
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	*bin = binary
	env := realbin.Env()
	dataDir := filepath.Join(tmp, "data")
	key := realbin.APIKey(*bin, dataDir, "bench", env)
	hostileKey := ""
	if *target == "streams" {
		hostileKey = realbin.APIKey(*bin, dataDir, "hostile", env)
	}
	srv := realbin.Serve(*bin, dataDir, filepath.Join(tmp, "serve.log"), env, strings.Fields(*serveArgs)...)
	defer srv.Stop(15 * time.Second)
	pid := srv.Pid()
	srvFiles := processNofile(pid)

	// Only now: the service keeps the limit it was started with.
	soft, hard := raiseNofile(uint64(*n) + 4096)
	holders := int((uint64(*n) + soft - 1025) / (soft - 1024))
	log.Printf("service pid %d, its open-files limit %s; this program's now %d (hard %d): %d holder processes", pid, srvFiles, soft, hard, holders)

	mon := &monitor{pid: pid}
	go mon.run()
	probe := &prober{base: srv.Base, key: key}
	stopProbe := probe.start(*probeEvery)

	time.Sleep(2 * time.Second)
	baseline := probe.cut("baseline (no load)")

	fl := &flood{addr: srv.Addr, target: *target, key: hostileKey, n: *n, reopen: *reopen}
	start := time.Now()
	fl.start(holders)
	for fl.open.Load()+fl.closed.Load() < int64(*n)*95/100 && time.Since(start) < time.Minute {
		time.Sleep(50 * time.Millisecond)
	}
	rampTook := time.Since(start)
	ramp := probe.cut(fmt.Sprintf("ramp (%.1f s to %d open)", rampTook.Seconds(), fl.open.Load()))
	mon.reset()
	closed0 := fl.closed.Load()
	overflows0 := listenOverflows()
	time.Sleep(*duration)
	overflows := listenOverflows() - overflows0
	steady := probe.cut(fmt.Sprintf("steady (%v with the flood held)", *duration))
	rss, rssPeak, fds, fdsPeak, hwm := mon.figures()
	minOpen := fl.minOpen(start.Add(rampTook))
	closedSteady := fl.closed.Load() - closed0
	stopProbe()
	fl.stop()

	logText, _ := os.ReadFile(srv.LogPath)
	shed := sumField(logText, "connections shed", "shed")

	fmt.Printf("machine: %d CPUs, %s, %s/%s; load average %s\n", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, realbin.LoadAvg())
	fmt.Printf("service: %s %s\n", *bin, *serveArgs)
	if line := findLine(logText, "msg=limits"); line != "" {
		fmt.Printf("service limits: %s\n", line)
	}
	fmt.Printf("flood: %d connections, target %s: %d open at the end of the ramp (%.1f s), fewest open during the steady phase %d; closed by the service %d in the steady phase (%.0f/s), %d in all; dial errors %d\n",
		*n, *target, fl.openAtRamp, rampTook.Seconds(), minOpen, closedSteady, float64(closedSteady)/duration.Seconds(), fl.closed.Load(), fl.dialErrors.Load())
	if *target == "streams" {
		fmt.Printf("streams: %d answered 200 (held), %d refused (429/503) in all\n", fl.streams.Load(), fl.refused.Load())
	}
	for _, p := range []phase{baseline, ramp, steady} {
		p.print()
	}
	fmt.Printf("service memory: VmRSS %.0f MB at the end of the steady phase (peak sampled %.0f MB), VmHWM %.0f MB\n", mb(rss), mb(rssPeak), mb(hwm))
	fmt.Printf("service open fds: %d at the end of the steady phase (peak sampled %d)\n", fds, fdsPeak)
	fmt.Printf("service log: %d connections shed; %d \"too many open files\" accept errors\n", shed, strings.Count(string(logText), "too many open files"))
	fmt.Printf("kernel: %d SYNs dropped by a full accept queue during the steady phase (TcpExtListenOverflows, whole machine)\n", overflows)
	ok := steady.health.within(time.Second) == 1 && steady.authed.within(time.Second) == 1
	fmt.Printf("every probe of the steady phase within 1 s: %v\n", ok)
}

// raiseNofile raises this process's open-files limit to at least want
// (soft and hard; raising the hard limit needs root) and returns the
// limits in force.
func raiseNofile(want uint64) (soft, hard uint64) {
	var lim syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	if lim.Cur < want || lim.Max < want {
		nl := syscall.Rlimit{Cur: max(want, lim.Cur), Max: max(want, lim.Max)}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &nl); err != nil {
			nl = syscall.Rlimit{Cur: lim.Max, Max: lim.Max}
			_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &nl)
			log.Printf("could not raise the open-files limit to %d (%v): %d connections at most", want, err, lim.Max)
		}
	}
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	return lim.Cur, lim.Max
}

// processNofile returns "soft/hard" from /proc/<pid>/limits.
func processNofile(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if line := findLine(b, "Max open files"); line != "" {
		f := strings.Fields(line)
		return f[3] + "/" + f[4]
	}
	return "?"
}

// flood is the hostile side: holder processes that each hold a share of
// the n connections, and their summed counters.
type flood struct {
	addr   string
	target string
	key    string // -target streams: the hostile API key
	n      int
	reopen bool

	open, closed, dialErrors atomic.Int64
	streams, refused         atomic.Int64 // -target streams: answers 200 and 429/503
	openAtRamp               int64
	mu                       sync.Mutex
	samples                  []openSample
	procs                    []*exec.Cmd
	wg                       sync.WaitGroup
	done                     chan struct{}
}

type openSample struct {
	at   time.Time
	open int64
}

// minOpen returns the fewest connections open at a sample after t, and
// notes the count at t.
func (f *flood) minOpen(after time.Time) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	lowest := int64(-1)
	for _, s := range f.samples {
		if f.openAtRamp == 0 && !s.at.Before(after) {
			f.openAtRamp = s.open
		}
		if s.at.After(after) && (lowest < 0 || s.open < lowest) {
			lowest = s.open
		}
	}
	return lowest
}

func (f *flood) stop() {
	for _, p := range f.procs {
		_ = p.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range f.procs {
		_ = p.Wait()
	}
	f.wg.Wait()
	close(f.done)
}

// runHolder is a holder process: it holds n hostile connections to addr
// (connection i from source address 127.0.0.(2 + (first+i)%8)), reopening
// each as soon as it is closed, and prints "open closed dial_errors
// answered_200 refused" every 100 ms until SIGTERM.
func runHolder(addr, target, key string, n, first int, reopen bool) {
	raiseNofile(uint64(n) + 512)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	var c counters
	hs := heads(target, key)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			holdOne(ctx, addr, first+i, hs[(first+i)%len(hs)], reopen, &c)
		})
	}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		fmt.Printf("%d %d %d %d %d\n", c.open.Load(), c.closed.Load(), c.dialErrors.Load(), c.ok.Load(), c.refused.Load())
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-t.C:
		}
	}
}

// counters are a holder's figures.
type counters struct {
	open, closed, dialErrors atomic.Int64
	ok, refused              atomic.Int64 // answers 200, and 429 or 503
}

// heads are the hostile request heads by -target: complete headers, a
// Content-Length, and a body that never comes; for streams, an event
// stream's GET with key.
func heads(target, key string) []string {
	if target == "streams" {
		return []string{"GET /api/v1/events HTTP/1.1\r\nHost: bench\r\nX-API-Key: " + key + "\r\nAccept: text/event-stream\r\n\r\n"}
	}
	webhook := "POST /api/v1/telephony/twilio/status/1?t=x HTTP/1.1\r\nHost: bench\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n"
	if target == "webhook" {
		return []string{webhook}
	}
	return []string{
		webhook,
		"POST /api/v1/campaign HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
		"GET /api/v1/health HTTP/1.1\r\nHost: bench\r\nContent-Length: 1000\r\n\r\n",
		"PUT /outdial/campaigns/1/x.csv HTTP/1.1\r\nHost: bench\r\nContent-Type: text/csv\r\nContent-Length: 1000\r\n\r\n",
	}
}

// holdOne keeps one hostile connection open until ctx ends (with reopen,
// reopening it each time the service closes it).
func holdOne(ctx context.Context, addr string, i int, head string, reopen bool, cs *counters) {
	open, closed, dialErrors := &cs.open, &cs.closed, &cs.dialErrors
	d := net.Dialer{Timeout: 30 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%8))}}
	buf := make([]byte, 512)
	for ctx.Err() == nil {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			if ctx.Err() == nil {
				dialErrors.Add(1)
				time.Sleep(100 * time.Millisecond)
			}
			continue
		}
		if _, err := io.WriteString(c, head); err != nil {
			c.Close()
			continue
		}
		open.Add(1)
		stop := context.AfterFunc(ctx, func() { c.Close() })
		for first := true; ; first = false {
			n, err := c.Read(buf)
			if first && n >= 12 {
				switch string(buf[9:12]) {
				case "200":
					cs.ok.Add(1)
				case "429", "503":
					cs.refused.Add(1)
				}
			}
			if err != nil {
				break
			}
		}
		stop()
		c.Close()
		open.Add(-1)
		if ctx.Err() == nil {
			closed.Add(1)
		}
		if !reopen {
			<-ctx.Done()
			return
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mb(kb int64) float64        { return float64(kb) / 1024 }

// start runs holders copies of this program, each holding its share.
func (f *flood) start(holders int) {
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	f.done = make(chan struct{})
	counts := make([][5]atomic.Int64, holders)
	for h := range holders {
		share := f.n / holders
		if h == holders-1 {
			share = f.n - share*(holders-1)
		}
		cmd := exec.Command(self, "-holder", f.addr, "-target", f.target, "-stream-key", f.key, "-conns", fmt.Sprint(share), "-first", fmt.Sprint(h*(f.n/holders)),
			"-reopen="+fmt.Sprint(f.reopen))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			log.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			log.Fatal(err)
		}
		f.procs = append(f.procs, cmd)
		f.wg.Go(func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				var v [5]int64
				if _, err := fmt.Sscan(sc.Text(), &v[0], &v[1], &v[2], &v[3], &v[4]); err == nil {
					for k := range v {
						counts[h][k].Store(v[k])
					}
				}
			}
		})
	}
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-f.done:
				return
			case now := <-t.C:
				var o, c, d, ok, ref int64
				for h := range counts {
					o += counts[h][0].Load()
					c += counts[h][1].Load()
					d += counts[h][2].Load()
					ok += counts[h][3].Load()
					ref += counts[h][4].Load()
				}
				f.open.Store(o)
				f.closed.Store(c)
				f.dialErrors.Store(d)
				f.streams.Store(ok)
				f.refused.Store(ref)
				f.mu.Lock()
				f.samples = append(f.samples, openSample{now, o})
				f.mu.Unlock()
			}
		}
	}()
}
