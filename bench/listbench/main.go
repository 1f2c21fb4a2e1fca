// Command listbench reproduces issue 16 item 6 with the real binary: one
// tenant ("noisy") stores large workflow definitions and campaigns that
// carry copies of them, then lists them from many parallel clients, while
// another tenant ("quiet") lists its own workflows and campaigns and a
// supervisor-like prober asks /api/v1/health (2 s timeout) every 100 ms.
// It prints what one list costs, and the quiet tenant's and the health
// check's latencies (and health's failures) idle and under each load.
//
//	go run ./bench/listbench                        # builds this tree
//	go run ./bench/listbench -bin /tmp/outdial-old  # another build
//	go run ./bench/listbench -size 8388000          # definitions of 8 MB (the old limit)
//
// A definition over the service's limit is refused (422 with the new
// limit of 1 MiB); the run then stops after printing the refusal. The load
// generator shares the machine's cores with the service, as in the issue's
// measurement (a 2-core machine).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outdial/outdial/bench/internal/realbin"
)

func main() {
	bin := flag.String("bin", "", "outdial binary to run (default: go build into a temporary directory)")
	workflows := flag.Int("workflows", 30, "large workflows of the noisy tenant")
	size := flag.Int("size", 1<<20, "bytes of each large workflow definition")
	campaigns := flag.Int("campaigns", 200, "campaigns of the noisy tenant, each with a copy of a large definition (0: none)")
	parallel := flag.Int("parallel", 40, "parallel list clients of the noisy tenant")
	duration := flag.Duration("duration", 10*time.Second, "length of each load phase")
	keep := flag.Bool("keep", false, "keep the temporary directory (data, service log)")
	flag.Parse()

	tmp, binary, cleanup, err := realbin.Workdir("listbench", *keep, *bin)
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	*bin = binary
	dataDir := filepath.Join(tmp, "data")
	env := realbin.Env()
	noisyKey := realbin.APIKey(*bin, dataDir, "noisy", env)
	quietKey := realbin.APIKey(*bin, dataDir, "quiet", env)
	serve := realbin.Serve(*bin, dataDir, filepath.Join(tmp, "serve.log"), env)
	defer serve.Stop(15 * time.Second)
	noisy, quiet := serve.Client(noisyKey), serve.Client(quietKey)

	// Setup.
	t := time.Now()
	def := definition(*size)
	var firstWorkflow any
	for i := range *workflows {
		res, body := send(noisy, http.MethodPost, "/api/v1/workflow",
			map[string]any{"name": fmt.Sprintf("big %d", i), "workflow_definition": json.RawMessage(def)})
		if res != http.StatusOK {
			fmt.Printf("workflow of %d bytes: status %d: %s\n", len(def), res, realbin.Tail(body, 400))
			fmt.Println("the service refuses definitions of this size; nothing to list")
			return
		}
		if i == 0 {
			var m map[string]any
			_ = json.Unmarshal(body, &m)
			firstWorkflow = m["id"]
		}
	}
	log.Printf("noisy: %d workflows of %d bytes in %.1f s", *workflows, len(def), time.Since(t).Seconds())
	small := definition(600)
	quiet.Post("/api/v1/workflow", map[string]any{"name": "quiet", "workflow_definition": json.RawMessage(small)})
	if *campaigns > 0 {
		t = time.Now()
		source := prepareCampaigns(noisy, serve.Fail)
		for i := range *campaigns {
			noisy.Post("/api/v1/campaign", map[string]any{"name": fmt.Sprintf("c%d", i), "workflow_id": firstWorkflow, "source_id": source})
		}
		log.Printf("noisy: %d campaigns (each with a copy of a %d-byte definition) in %.1f s", *campaigns, len(def), time.Since(t).Seconds())
		qsource := prepareCampaigns(quiet, serve.Fail)
		qwf := quiet.Get("/api/v1/workflow")["workflows"].([]any)[0].(map[string]any)["id"]
		quiet.Post("/api/v1/campaign", map[string]any{"name": "quiet", "workflow_id": qwf, "source_id": qsource})
	}
	log.Printf("database: %.0f MB", float64(fileSize(filepath.Join(dataDir, "outdial.db"))+fileSize(filepath.Join(dataDir, "outdial.db-wal")))/1e6)

	fmt.Printf("machine: %d CPUs, %s, load average %s; binary %s\n", runtime.NumCPU(), runtime.Version(), realbin.LoadAvg(), *bin)
	fmt.Printf("noisy tenant: %d workflows of %d bytes, %d campaigns carrying a copy; %d parallel list clients, %v per phase\n\n",
		*workflows, len(def), *campaigns, *parallel, *duration)
	fmt.Printf("%-34s %8s %9s %9s | %-27s | %-36s\n", "phase", "lists", "list p50", "list p99", "quiet tenant list p50/p99/max", "health: checks, failed, p50/p99/max")

	phases := []struct{ name, path string }{
		{"idle", ""},
		{"GET /workflow x" + fmt.Sprint(*parallel), "/api/v1/workflow"},
	}
	if *campaigns > 0 {
		phases = append(phases, struct{ name, path string }{"GET /campaign?limit=200 x" + fmt.Sprint(*parallel), "/api/v1/campaign?limit=200"})
	}
	for _, p := range phases {
		r := runPhase(serve.Base, noisyKey, quietKey, p.path, *parallel, *duration, *campaigns > 0)
		fmt.Printf("%-34s %8d %9s %9s | %-27s | %5d %6d  %s\n", p.name, r.lists.n(), ms(r.lists.pct(50)), ms(r.lists.pct(99)),
			r.quiet.summary(), r.health.n(), r.healthFailed, r.health.summary())
		if r.errors > 0 {
			fmt.Printf("  %d noisy lists failed (first: %s)\n", r.errors, r.firstError)
		}
	}
}

// phaseResult is what one phase measured.
type phaseResult struct {
	lists, quiet, health samples
	healthFailed         int
	errors               int
	firstError           string
}

// runPhase loads path with parallel clients of the noisy tenant for d (no
// load when path is ""), while the quiet tenant lists its workflows (and
// campaigns) one request at a time and the prober asks for health every
// 100 ms.
func runPhase(base, noisyKey, quietKey, path string, parallel int, d time.Duration, withCampaigns bool) phaseResult {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: parallel + 4}}
	var r phaseResult
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs atomic.Int64
	if path != "" {
		for range parallel {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					start := time.Now()
					status, err := get(ctx, client, base+path, noisyKey)
					if ctx.Err() != nil {
						return
					}
					if err != nil || status != http.StatusOK {
						if errs.Add(1) == 1 {
							mu.Lock()
							r.firstError = fmt.Sprintf("status %d, %v", status, err)
							mu.Unlock()
						}
						continue
					}
					mu.Lock()
					r.lists.add(time.Since(start))
					mu.Unlock()
				}
			}()
		}
	}
	wg.Add(2)
	go func() { // the quiet tenant
		defer wg.Done()
		paths := []string{"/api/v1/workflow"}
		if withCampaigns {
			paths = append(paths, "/api/v1/campaign")
		}
		for i := 0; ctx.Err() == nil; i++ {
			start := time.Now()
			status, err := get(context.Background(), client, base+paths[i%len(paths)], quietKey)
			if err == nil && status == http.StatusOK {
				mu.Lock()
				r.quiet.add(time.Since(start))
				mu.Unlock()
			}
			sleepCtx(ctx, 50*time.Millisecond)
		}
	}()
	go func() { // the supervisor's health check
		defer wg.Done()
		hc := &http.Client{Timeout: 2 * time.Second}
		for ctx.Err() == nil {
			start := time.Now()
			res, err := hc.Get(base + "/api/v1/health")
			took := time.Since(start)
			ok := err == nil && res.StatusCode == http.StatusOK
			if err == nil {
				io.Copy(io.Discard, res.Body) //nolint:errcheck
				res.Body.Close()
			}
			mu.Lock()
			r.health.add(took)
			if !ok {
				r.healthFailed++
			}
			mu.Unlock()
			sleepCtx(ctx, 100*time.Millisecond)
		}
	}()
	wg.Wait()
	r.errors = int(errs.Load())
	return r
}

// get sends GET url with the key, reads the body and returns the status.
func get(ctx context.Context, c *http.Client, url, key string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-API-Key", key)
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, err = io.Copy(io.Discard, res.Body)
	return res.StatusCode, err
}

// send posts body as JSON with the client's key and returns the status and
// the answer, whatever the status.
func send(c *realbin.Client, method, path string, body any) (int, []byte) {
	res, err := c.Send(context.Background(), method, path, body)
	if err != nil {
		c.Fail("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// prepareCampaigns gives the client's organization what a campaign needs
// (a default Twilio configuration with a caller id, an uploaded contacts
// file of one row) and returns the upload's file key. Nothing is dialled.
func prepareCampaigns(c *realbin.Client, fail func(string, ...any)) any {
	cfg := c.Post("/api/v1/organizations/telephony-configs", map[string]any{
		"name": "main", "is_default_outbound": true,
		"config": map[string]any{"provider": "twilio", "account_sid": "AC0000000000000001", "auth_token": "0123456789abcdef0123456789abcdef"},
	})
	c.Post(fmt.Sprintf("/api/v1/organizations/telephony-configs/%v/phone-numbers", cfg["id"]),
		map[string]any{"address": "+14155550100", "is_default_caller_id": true})
	csv := []byte("phone_number,first_name\n+14155550101,Ada\n")
	up := c.Post("/api/v1/s3/presigned-upload-url", map[string]any{"file_name": "contacts.csv", "file_size": len(csv), "content_type": "text/csv"})
	realbin.Upload(up["upload_url"].(string), csv, fail)
	return up["file_key"]
}

// definition is a valid workflow definition (a start node with a greeting,
// an end node, one edge) padded with an extra top-level key to n bytes.
func definition(n int) []byte {
	const head = `{"nodes":[` +
		`{"id":"start","type":"startCall","position":{"x":0,"y":0},"data":{"name":"Greeting","prompt":"You are calling {{first_name}}.","greeting":"Hi {{first_name}}!"}},` +
		`{"id":"bye","type":"endCall","position":{"x":200,"y":0},"data":{"name":"Goodbye","prompt":"Thank them and hang up."}}],` +
		`"edges":[{"id":"e1","source":"start","target":"bye","data":{"label":"Done","condition":"The message was delivered"}}],"pad":"`
	const tail = `"}`
	pad := max(0, n-len(head)-len(tail))
	return []byte(head + strings.Repeat("x", pad) + tail)
}

// samples are latencies.
type samples []time.Duration

func (s *samples) add(d time.Duration) { *s = append(*s, d) }

func (s samples) n() int { return len(s) }

// pct returns the p-th percentile (nearest rank), 0 without samples.
func (s samples) pct(p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	c := append(samples(nil), s...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	i := int(float64(len(c))*p/100+0.5) - 1
	return c[min(max(i, 0), len(c)-1)]
}

func (s samples) summary() string {
	if len(s) == 0 {
		return "-"
	}
	return ms(s.pct(50)) + " / " + ms(s.pct(99)) + " / " + ms(s.pct(100))
}

// ms formats d in milliseconds.
func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
