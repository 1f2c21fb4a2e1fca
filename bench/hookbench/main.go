// Command hookbench measures webhook ingestion, issue 6's "Measure": the
// signed status callbacks per second the service accepts and applies for
// Twilio, Telnyx and Vonage (their three signature schemes: HMAC-SHA1 of the
// URL and form, Ed25519 over timestamp|body, HS256 JWT with payload_hash),
// sent by 64 concurrent senders over loopback.
//
//	go run ./bench/hookbench
//	go run ./bench/hookbench -calls 20000 -senders 64 -providers twilio,telnyx,vonage
//
// The service runs in this process as `outdial serve` builds it: a real
// SQLite file in a temporary directory, the web router on a loopback TCP
// listener, a started dialer engine. For each provider it creates a
// configuration (with the provider simulator's credentials, so the
// signatures are the simulator's own), a running campaign of -calls
// contacts, and claims every attempt and records it placed with a call id,
// as the dialer does when the provider accepted the call. The senders then
// post, for every call, a signed progress event (ringing) and a signed final
// event (completed), in that order, each signed as the provider signs,
// built before the clock starts. Counted: events answered 2xx per second of
// wall time; every call must end final and the campaign completed. The
// senders share the machine's cores with the service.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web"
)

// target is issue 6's figure: accepted and applied callbacks per second.
const target = 3000

// signed is one provider request, built and signed before the measurement.
type signed struct {
	url    string
	header http.Header
	body   []byte
}

// scheme is one provider's side of the benchmark.
type scheme struct {
	name string
	// creds are the telephony configuration's credentials.
	creds func() map[string]any
	// callID is the provider's id of call i.
	callID func(i int) string
	// events returns call i's signed progress and final events for the
	// status URL statusURL.
	events func(statusURL, callID string, i int) []signed
	close  func()
}

func main() {
	calls := flag.Int("calls", 20000, "calls per provider (two events each)")
	senders := flag.Int("senders", 64, "concurrent senders")
	only := flag.String("providers", "twilio,telnyx,vonage", "providers to measure, comma separated")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the measured phases to this file")
	flag.Parse()
	log.SetFlags(0)
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}

	dir, err := os.MkdirTemp("", "hookbench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	svc, err := startService(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer svc.close()

	fmt.Printf("hookbench: %d calls per provider, %d senders, GOMAXPROCS %d\n", *calls, *senders, runtime.GOMAXPROCS(0))
	fmt.Printf("%-8s %10s %10s %10s %10s %10s\n", "provider", "events", "seconds", "events/s", "p50 ms", "p99 ms")
	failed := false
	for _, name := range strings.Split(*only, ",") {
		sc, ok := schemes[strings.TrimSpace(name)]
		if !ok {
			log.Fatalf("unknown provider %q", name)
		}
		r, err := svc.run(sc(), *calls, *senders)
		if err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		fmt.Printf("%-8s %10d %10.2f %10.0f %10.2f %10.2f  cpu %.2fs\n", name, r.events, r.elapsed.Seconds(),
			float64(r.events)/r.elapsed.Seconds(), ms(r.p50), ms(r.p99), r.cpu.Seconds())
		if float64(r.events)/r.elapsed.Seconds() < target {
			failed = true
		}
	}
	if failed {
		fmt.Printf("below the target of %d events/s\n", target)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// schemes are the measured providers by name.
var schemes = map[string]func() scheme{
	"twilio": twilioScheme,
	"telnyx": telnyxScheme,
	"vonage": vonageScheme,
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// service is the in-process service under test.
type service struct {
	db     *store.DB
	eng    *dialer.Engine
	srv    *http.Server
	public string
	cancel context.CancelFunc
}

func startService(dir string) (*service, error) {
	ctx, cancel := context.WithCancel(context.Background())
	key := make([]byte, store.KeySize)
	rand.Read(key) //nolint:errcheck // never fails
	sealer, err := store.NewSealer(key)
	if err != nil {
		cancel()
		return nil, err
	}
	db, err := store.Open(ctx, filepath.Join(dir, "outdial.db"), sealer)
	if err != nil {
		cancel()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		return nil, err
	}
	public := "http://" + ln.Addr().String()
	eng := dialer.New(dialer.Config{DB: db, PublicURL: public, TokenKey: sealer.Derive("webhook-token")})
	srv := &http.Server{Handler: web.New(web.Config{DB: db, Dialer: eng, PublicURL: public}), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	if err := eng.Start(ctx); err != nil {
		cancel()
		return nil, err
	}
	return &service{db: db, eng: eng, srv: srv, public: public, cancel: cancel}, nil
}

func (s *service) close() {
	s.cancel()
	s.eng.Stop()
	s.srv.Close()
	s.db.Close()
}

// result is one provider's measurement.
type result struct {
	events   int
	elapsed  time.Duration
	p50, p99 time.Duration
	cpu      time.Duration
}

// run sets up a campaign of n calls in flight for sc's provider and posts
// their events from senders goroutines.
func (s *service) run(sc scheme, n, senders int) (result, error) {
	defer sc.close()
	ctx := context.Background()
	campaignID, attempts, err := s.prepare(ctx, sc, n)
	if err != nil {
		return result{}, err
	}
	reqs := make([][]signed, len(attempts))
	for i, a := range attempts {
		url := fmt.Sprintf("%s/api/v1/telephony/%s/status/%d?t=%s", s.public, sc.name, a.ID, s.eng.Token(a.ID))
		reqs[i] = sc.events(url, sc.callID(i), i)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: senders, MaxIdleConnsPerHost: senders}}
	var next atomic.Int64
	lat := make([][]time.Duration, senders)
	errs := make(chan error, senders)
	var wg sync.WaitGroup
	cpu0 := cpuTime()
	start := time.Now()
	for w := 0; w < senders; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(reqs) {
					return
				}
				for _, r := range reqs[i] {
					t0 := time.Now()
					if err := post(client, r); err != nil {
						errs <- err
						return
					}
					lat[w] = append(lat[w], time.Since(t0))
				}
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	close(errs)
	if err := <-errs; err != nil {
		return result{}, err
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	c, err := s.db.CampaignByID(ctx, campaignID)
	if err != nil {
		return result{}, err
	}
	if c.State != store.StateCompleted || c.ProcessedRows != int64(n) {
		return result{}, fmt.Errorf("campaign %d is %s with %d of %d contacts final", c.ID, c.State, c.ProcessedRows, n)
	}
	return result{events: len(all), elapsed: elapsed, p50: all[len(all)/2], p99: all[len(all)*99/100], cpu: cpu}, nil
}

func post(client *http.Client, r signed) error {
	req, err := http.NewRequest(http.MethodPost, r.url, bytes.NewReader(r.body))
	if err != nil {
		return err
	}
	req.Header = r.header.Clone()
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: http %d", r.url, resp.StatusCode)
	}
	return nil
}

// cpuTime is this process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
