// Command apibench measures the read path of the telephony-configuration API
// against a bare net/http baseline in the same run: requests/s and p50/p99
// latency with N concurrent keep-alive connections over loopback.
//
//	go run ./bench/apibench -duration 10s -conns 32
//
// It builds the real server (real SQLite file in a temp dir, or with
// -database-url an empty PostgreSQL database; real router, real API-key
// auth), creates 10 configurations, then loads
// GET /api/v1/organizations/telephony-configs and
// GET /api/v1/organizations/telephony-configs/{id}, and finally a bare handler
// that encodes a JSON body of the same shape. The load generator shares the
// machine's cores with the server.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web"
)

type result struct {
	name    string
	rps     float64
	p50     time.Duration
	p99     time.Duration
	errors  int
	samples int
}

func main() {
	duration := flag.Duration("duration", 10*time.Second, "load duration per target")
	conns := flag.Int("conns", 32, "concurrent connections")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	databaseURL := flag.String("database-url", "", "an empty PostgreSQL database to use instead of a SQLite file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	ctx := context.Background()

	dir, err := os.MkdirTemp("", "apibench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sealer, err := store.NewSealer(make([]byte, store.KeySize))
	if err != nil {
		log.Fatal(err)
	}
	location := filepath.Join(dir, "outdial.db")
	if *databaseURL != "" {
		location = *databaseURL
	}
	db, err := store.Open(ctx, location, sealer)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	_, key, err := db.CreateAPIKey(ctx, "bench", "bench", store.RoleAdmin)
	if err != nil {
		log.Fatal(err)
	}
	var firstID int64
	for i := range 10 {
		c, err := db.CreateTelephonyConfig(ctx, 1, store.TelephonyConfig{
			Name: fmt.Sprintf("config-%d", i), Provider: "twilio", IsDefaultOutbound: i == 0,
			Credentials: store.Credentials{"account_sid": "AC0123456789abcdef0123456789abcdef", "auth_token": "0123456789abcdef0123456789abcdef", "machine_detection": false},
		})
		if err != nil {
			log.Fatal(err)
		}
		if i == 0 {
			firstID = c.ID
		}
	}
	api := serve(web.New(web.Config{DB: db}))
	base := serve(http.HandlerFunc(baseline))

	targets := []struct{ name, url string }{
		{"GET telephony-configs (list)", api + "/api/v1/organizations/telephony-configs"},
		{"GET telephony-configs/{id}", fmt.Sprintf("%s/api/v1/organizations/telephony-configs/%d", api, firstID)},
		{"baseline net/http JSON", base + "/"},
	}
	var results []result
	for _, t := range targets {
		results = append(results, load(t.name, t.url, key.Reveal(), *conns, *duration))
	}
	fmt.Printf("%d connections, %s per target, GOMAXPROCS=%d\n\n", *conns, *duration, runtimeProcs())
	fmt.Printf("%-32s %10s %9s %9s %7s\n", "target", "req/s", "p50", "p99", "errors")
	for _, r := range results {
		fmt.Printf("%-32s %10.0f %9s %9s %7d\n", r.name, r.rps, r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), r.errors)
	}
	b := results[len(results)-1]
	fmt.Println()
	for _, r := range results[:len(results)-1] {
		fmt.Printf("%-32s throughput %.0f%% of baseline (target >= 40%%), p99 %.2fx baseline (target <= 2x)\n",
			r.name, 100*r.rps/b.rps, float64(r.p99)/float64(b.p99))
	}
}

func serve(h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go http.Serve(ln, h) //nolint:errcheck // runs until exit
	return "http://" + ln.Addr().String()
}

type item struct {
	ID                int64  `json:"id"`
	Name              string `json:"name"`
	Provider          string `json:"provider"`
	IsDefaultOutbound bool   `json:"is_default_outbound"`
	PhoneNumberCount  int64  `json:"phone_number_count"`
	CreatedAt         string `json:"created_at"`
	UpdatedAt         string `json:"updated_at"`
}

// baseline answers a JSON list of the same shape and size as the list
// endpoint, encoded per request, with no database and no auth.
func baseline(w http.ResponseWriter, _ *http.Request) {
	items := make([]item, 10)
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	for i := range items {
		items[i] = item{ID: int64(i + 1), Name: fmt.Sprintf("config-%d", i), Provider: "twilio", CreatedAt: now, UpdatedAt: now}
	}
	body, _ := json.Marshal(map[string]any{"configurations": items})
	w.Header().Set("Content-Type", "application/json")
	w.Write(body) //nolint:errcheck
}

func load(name, url, key string, conns int, d time.Duration) result {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var mu sync.Mutex
	var all []time.Duration
	errs := 0
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 1<<16)
			e := 0
			for time.Now().Before(deadline) {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("X-API-Key", key)
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					e++
					continue
				}
				io.Copy(io.Discard, resp.Body) //nolint:errcheck
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					e++
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			all = append(all, lat...)
			errs += e
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[int(p*float64(len(all)-1))]
	}
	return result{name: strings.TrimSpace(name), rps: float64(len(all)) / elapsed.Seconds(), p50: pct(0.50), p99: pct(0.99), errors: errs, samples: len(all)}
}
