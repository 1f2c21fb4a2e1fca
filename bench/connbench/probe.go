package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// prober times health and an authenticated GET, each on a new connection,
// each in its own loop: a probe starts every interval, or when the previous
// one has finished if it took longer.
type prober struct {
	base, key string
	mu        sync.Mutex
	health    []probeResult
	authed    []probeResult
	inflight  map[*[]probeResult]time.Time // the probe under way of each kind, and its start
}

type probeResult struct {
	took time.Duration
	err  error
}

func (p *prober) one(client *http.Client, path, key string) probeResult {
	req, _ := http.NewRequest(http.MethodGet, p.base+path, nil)
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	start := time.Now()
	res, err := client.Do(req)
	if err == nil {
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err == nil && res.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d", res.StatusCode)
		}
	}
	return probeResult{took: time.Since(start), err: err}
}

// cut returns the probes since the last cut as a phase; a probe still
// under way counts as failed, with its time so far.
func (p *prober) cut(name string) phase {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for into, start := range p.inflight {
		if now.Sub(start) > time.Second {
			*into = append(*into, probeResult{took: now.Sub(start), err: fmt.Errorf("no answer after %.1f s", now.Sub(start).Seconds())})
			p.inflight[into] = now
		}
	}
	ph := phase{name: name, health: probes(p.health), authed: probes(p.authed)}
	p.health, p.authed = nil, nil
	return ph
}

type phase struct {
	name           string
	health, authed probes
}

func (ph phase) print() {
	fmt.Printf("%s:\n", ph.name)
	fmt.Printf("  GET /api/v1/health:          %s\n", ph.health)
	fmt.Printf("  GET /api/v1/workflow (key):  %s\n", ph.authed)
}

type probes []probeResult

// within returns the share of probes answered without error within d.
func (ps probes) within(d time.Duration) float64 {
	if len(ps) == 0 {
		return 0
	}
	n := 0
	for _, p := range ps {
		if p.err == nil && p.took <= d {
			n++
		}
	}
	return float64(n) / float64(len(ps))
}

func (ps probes) String() string {
	var ok []time.Duration
	var errs []string
	for _, p := range ps {
		if p.err != nil {
			errs = append(errs, p.err.Error())
			continue
		}
		ok = append(ok, p.took)
	}
	slices.Sort(ok)
	q := func(f float64) time.Duration {
		if len(ok) == 0 {
			return 0
		}
		return ok[min(int(f*float64(len(ok))), len(ok)-1)]
	}
	s := fmt.Sprintf("%4d probes, p50 %7.1f ms, p99 %7.1f ms, max %7.1f ms, within 1 s %5.1f %%, failed %d",
		len(ps), ms(q(0.5)), ms(q(0.99)), ms(q(1)), 100*ps.within(time.Second), len(errs))
	if len(errs) > 0 {
		s += " (" + errs[0] + ")"
	}
	return s
}

func (p *prober) start(every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	p.inflight = map[*[]probeResult]time.Time{}
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	loop := func(path, key string, into *[]probeResult) {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			p.mu.Lock()
			p.inflight[into] = time.Now()
			p.mu.Unlock()
			r := p.one(client, path, key)
			p.mu.Lock()
			delete(p.inflight, into)
			*into = append(*into, r)
			p.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}
	wg.Go(func() { loop("/api/v1/health", "", &p.health) })
	wg.Go(func() { loop("/api/v1/workflow", p.key, &p.authed) })
	return func() { cancel(); wg.Wait() }
}
