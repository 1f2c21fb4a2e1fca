package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/outdial/outdial/bench/internal/realbin"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// dialRun is one run of the dialer benchmark.
type dialRun struct {
	tabs          int
	calls         int
	wall          time.Duration // start request to completion seen by polling
	cpu, chromium time.Duration // the service's and the browser's CPU over the dialing phase
	other         time.Duration // every other process's CPU over it
	load0, load1  string
	events        string // what the tabs handled
}

func (r dialRun) callsPerSecond() float64 { return float64(r.calls) / r.wall.Seconds() }
func (r dialRun) cpuPer1000() float64     { return r.cpu.Seconds() / (float64(r.calls) / 1000) }

// measureDialCPU runs bench/dialbench's campaign cfg.cpuRuns times in each
// mode, alternating: without a console page open, then with cfg.tabs tabs
// on the campaign's page, each run on a fresh service and data directory.
func measureDialCPU(cfg config, out *report) {
	b, err := startBrowser(cfg.chromium)
	if err != nil {
		out.printf("dial CPU: %v", err)
		return
	}
	defer b.close()
	out.printf("")
	out.printf("## Service CPU during the dialer benchmark, with and without %d campaign pages open (%s; machine: %d CPUs, %s)",
		cfg.tabs, time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), runtime.Version())
	out.printf("campaign: %d contacts, max_concurrency %d, rate_limit_per_second %g, calls answered at once, talking %v (bench/dialbench's)",
		cfg.contacts, cfg.concurrency, cfg.rate, cfg.talk)
	out.printf("%-4s %-5s %7s %8s %8s %11s %10s %9s %15s  %s", "run", "tabs", "calls", "wall s", "calls/s", "CPU-s", "CPU/1000", "Chromium", "others (cores)", "load avg before/after")
	var runs []dialRun
	for i := range cfg.cpuRuns {
		for _, tabs := range []int{0, cfg.tabs} {
			r := runDial(cfg, b, fmt.Sprintf("dial-%d-%d", i, tabs), tabs)
			runs = append(runs, r)
			out.printf("%-4d %-5d %7d %8.2f %8.0f %11.2f %10.3f %9.2f %15.2f  %s / %s",
				i+1, r.tabs, r.calls, r.wall.Seconds(), r.callsPerSecond(), r.cpu.Seconds(), r.cpuPer1000(),
				r.chromium.Seconds(), r.other.Seconds()/r.wall.Seconds(), r.load0, r.load1)
			if r.events != "" {
				out.printf("     tabs: %s", r.events)
			}
		}
	}
	var cpu0, cpu1, rate0, rate1 []float64
	for _, r := range runs {
		if r.tabs == 0 {
			cpu0, rate0 = append(cpu0, r.cpuPer1000()), append(rate0, r.callsPerSecond())
		} else {
			cpu1, rate1 = append(cpu1, r.cpuPer1000()), append(rate1, r.callsPerSecond())
		}
	}
	m0, _ := medianMax(cpu0)
	m1, _ := medianMax(cpu1)
	r0, _ := medianMax(rate0)
	r1, _ := medianMax(rate1)
	out.printf("median service CPU per 1,000 calls: %.3f s without a page, %.3f s with %d pages: %+.3f s (%+.0f%%)",
		m0, m1, cfg.tabs, m1-m0, (m1-m0)/m0*100)
	out.printf("median completed calls/s: %.0f without a page, %.0f with %d pages (%+.0f%%)", r0, r1, cfg.tabs, (r1-r0)/r0*100)
}

// runDial starts a service on a fresh data directory and a simulator
// answering every call at once, creates the campaign, opens tabs tabs on
// its page (signed in, live: each has applied a snapshot), then starts it
// and measures the dialing phase as bench/dialbench does.
func runDial(cfg config, b *browser, name string, tabs int) dialRun {
	sim := twiliosim.Start(twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: cfg.talk}
	}})
	defer sim.Close()
	svc := startService(cfg.bin, filepath.Join(cfg.tmp, name), sim, cfg.policy)
	defer svc.srv.Stop(15 * time.Second)
	id := svc.createCampaign("bench", cfg.contacts, 0, cfg.concurrency, cfg.rate)

	// Each page is an operator of its own: a browser context signed in
	// through the form (one profile's tabs share its 6 connections to the
	// server, and each page holds one with its event stream).
	var pages []context.Context
	for range tabs {
		ctx, cancel, err := b.newSession(svc.srv.Base, svc.key)
		if err != nil {
			svc.srv.Fail("%v", err)
		}
		defer cancel()
		if err := openCampaign(ctx, svc.srv.Base+campaignPage(id)); err != nil {
			svc.srv.Fail("%v", err)
		}
		pages = append(pages, ctx)
	}
	if tabs > 0 {
		time.Sleep(2 * time.Second) // the pages' first requests over
	}

	pid := svc.srv.Pid()
	r := dialRun{tabs: tabs, load0: realbin.LoadAvg()}
	runtime.GC()
	cpu0, br0, busy0, self0 := realbin.ProcCPU(pid), treeCPU(b.pid), realbin.MachineBusy(), realbin.SelfCPU()
	start := time.Now()
	svc.start(id)
	var final map[string]any
	for {
		time.Sleep(100 * time.Millisecond)
		final = svc.c.Get(campaignAPI(id))
		if final["state"] != "running" {
			break
		}
		if time.Since(start) > 10*time.Minute {
			svc.srv.Fail("campaign still running after 10 minutes: %v", final)
		}
	}
	r.wall = time.Since(start)
	r.cpu, r.chromium = realbin.ProcCPU(pid)-cpu0, treeCPU(b.pid)-br0
	r.other = realbin.MachineBusy() - busy0 - r.cpu - r.chromium - (realbin.SelfCPU() - self0)
	r.load1 = realbin.LoadAvg()
	if final["state"] != "completed" {
		svc.srv.Fail("campaign ended %v: %v", final["state"], final)
	}
	r.calls = int(final["executed_count"].(float64))

	// Every page followed the campaign to its end.
	var minCampaign, minCall, done int
	for i, ctx := range pages {
		st, ev, err := pageState(ctx, 15*time.Second)
		if err != nil {
			svc.srv.Fail("tab %d: %v", i, err)
		}
		if st == "completed" {
			done++
		}
		if i == 0 || ev["campaign"] < minCampaign {
			minCampaign = ev["campaign"]
		}
		if i == 0 || ev["call"] < minCall {
			minCall = ev["call"]
		}
	}
	if tabs > 0 {
		r.events = fmt.Sprintf("%d of %d show the state completed; each handled at least %d snapshots and %d call events",
			done, tabs, minCampaign, minCall)
	}
	return r
}

// openCampaign loads the campaign page at u in the tab of ctx with the
// hook and waits until it has applied its first snapshot.
func openCampaign(ctx context.Context, u string) error {
	tctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := chromedp.Call(tctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: hook}); err != nil {
		return fmt.Errorf("add the hook: %w", err)
	}
	if err := chromedp.Do(tctx, chromedp.Navigate(u)); err != nil {
		return fmt.Errorf("load %s: %w", u, err)
	}
	for {
		t, err := chromedp.Run(tctx, chromedp.Evaluate[timings](pageTimes))
		if err == nil && t.Snapshot > 0 {
			return nil
		}
		select {
		case <-tctx.Done():
			return fmt.Errorf("load %s: no snapshot applied within 2 minutes (%v)", u, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// pageState waits (at most timeout) until the campaign page of ctx shows
// a final state and returns it with the events the page handled.
func pageState(ctx context.Context, timeout time.Duration) (string, map[string]int, error) {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	const read = `(() => ({ state: document.querySelector('[data-field="campaign_state"]').textContent.trim(),
	  events: (window.__consolebench || {}).events || {} }))()`
	type answer struct {
		State  string         `json:"state"`
		Events map[string]int `json:"events"`
	}
	var a answer
	for {
		var err error
		a, err = chromedp.Run(tctx, chromedp.Evaluate[answer](read))
		if err == nil && (a.State == "completed" || a.State == "cancelled" || a.State == "failed") {
			return a.State, a.Events, nil
		}
		select {
		case <-tctx.Done():
			if err != nil {
				return "", nil, fmt.Errorf("read the page: %w", err)
			}
			return a.State, a.Events, nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}
