package main

import (
	"context"
	"fmt"
	"log"
	"path/filepath"
	"runtime"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/outdial/outdial/bench/internal/realbin"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// Slow dialing for the page-load measure: every call rings slowRing, then
// talks slowTalk, two at a time, so that both campaigns stay running (a
// call every 20 s) for minutes with calls in flight.
const (
	slowRing        = 30 * time.Second
	slowTalk        = 10 * time.Second
	slowConcurrency = 2
)

// measureLoads is the page-load measure: a service with a campaign of
// cfg.rows contacts and one of cfg.smallRows, both running slowly; each
// campaign's page loaded cold cfg.loads times (after one load not
// counted); the API calls behind the page timed; the service's CPU with
// the page open and not.
func measureLoads(cfg config, out *report) {
	sim := twiliosim.Start(twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Human, RingDelay: slowRing, TalkDuration: slowTalk}
	}})
	defer sim.Close()
	dir := filepath.Join(cfg.tmp, "load")
	svc := startService(cfg.bin, dir, sim, cfg.policy)
	defer svc.srv.Stop(15 * time.Second)
	big := svc.createCampaign("million", cfg.rows, 0, slowConcurrency, 1)
	small := svc.createCampaign("ten", cfg.smallRows, cfg.rows, slowConcurrency, 1)

	b, err := startBrowser(cfg.chromium)
	if err != nil {
		svc.srv.Fail("%v", err)
	}
	defer b.close()

	out.printf("## Page load, cold cache (%s; machine: %d CPUs, %s)", time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), runtime.Version())
	out.printf("campaigns running, %d calls at once, each ringing %v then talking %v (a call every %v)",
		slowConcurrency, slowRing, slowTalk, (slowRing+slowTalk)/slowConcurrency)
	for _, c := range []struct {
		id   int64
		rows int
	}{{big, cfg.rows}, {small, cfg.smallRows}} {
		svc.start(c.id)
		waitInFlight(svc, c.id)
		path := campaignPage(c.id)
		load0 := realbin.LoadAvg()
		warm, err := coldLoad(b, svc.srv.Base, svc.key, path, cfg.quiet) // not counted: the browser's first load of the page
		if err != nil {
			svc.srv.Fail("%v", err)
		}
		var loads []*load
		for range cfg.loads {
			l, err := coldLoad(b, svc.srv.Base, svc.key, path, cfg.quiet)
			if err != nil {
				svc.srv.Fail("%v", err)
			}
			loads = append(loads, l)
		}
		state := svc.state(c.id)
		out.printf("")
		out.printf("### %s: campaign of %d contacts (state after the loads: %s); load average before %s, after %s",
			path, c.rows, state, load0, realbin.LoadAvg())
		reportLoads(out, warm, loads)
		out.printf("the page and the API behind it, GET answered (median / longest of 5, ms):")
		med, longest := svc.timePage(svc.pageClient(), path, 5)
		out.printf("  %-45s %7.1f / %7.1f  (the HTML, signed in, no browser)", path, ms(med), ms(longest))
		for _, p := range []string{campaignAPI(c.id), campaignAPI(c.id) + "/diagnosis", campaignAPI(c.id) + "/calls?limit=51"} {
			med, longest := svc.timeGET(p, 5)
			out.printf("  %-45s %7.1f / %7.1f", p, ms(med), ms(longest))
		}
	}
	if cfg.idleFor > 0 {
		openPageCPU(cfg, out, svc, b, big, small)
	}
	oneProfile(out, svc, b, big, 8)
}

// oneProfile opens up to n tabs of one signed-in browser profile on
// campaign id's page, one after the other, and reports how many become
// live (each within 20 s): Chromium opens at most 6 HTTP/1.1 connections
// to a host per profile, and each live page holds one with its event
// stream.
func oneProfile(out *report, svc *service, b *browser, id int64, n int) {
	sess, cancel, err := b.newSession(svc.srv.Base, svc.key)
	if err != nil {
		svc.srv.Fail("%v", err)
	}
	defer cancel()
	if err := chromedp.Do(sess, chromedp.Navigate("about:blank")); err != nil {
		svc.srv.Fail("leave the campaigns list: %v", err)
	}
	out.printf("")
	out.printf("### Tabs of one browser profile on %s (plain HTTP/1.1 over loopback)", campaignPage(id))
	live := 0
	for i := range n {
		ctx, cancelTab := chromedp.NewContext(sess)
		defer cancelTab()
		if err := chromedp.Do(ctx); err != nil {
			svc.srv.Fail("open a tab: %v", err)
		}
		tctx, cancelWait := context.WithTimeout(ctx, 20*time.Second)
		err := openCampaign(tctx, svc.srv.Base+campaignPage(id))
		cancelWait()
		if err != nil {
			out.printf("  tab %d: not live within 20 s (%v)", i+1, err)
			break
		}
		live++
	}
	if live < n {
		out.printf("  %d tabs of one profile became live; tab %d did not", live, live+1)
	} else {
		out.printf("  all %d tabs of one profile became live", n)
	}
}

// waitInFlight waits until campaign id has a call in flight (at most a
// minute).
func waitInFlight(svc *service, id int64) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if d := svc.c.Get(campaignAPI(id) + "/diagnosis"); d["in_flight"].(float64) > 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	svc.srv.Fail("campaign %d has no call in flight a minute after its start", id)
}

// reportLoads prints the first load (warm, not counted: the browser's
// first of the page, and the first stream of the campaign), each load and
// the median and largest of each figure, then the resources of the median
// load.
func reportLoads(out *report, warm *load, loads []*load) {
	out.printf("%-4s %9s %5s %7s %7s %7s %7s %7s %9s %11s", "load", "KB", "reqs", "TTFB", "FCP", "DCL", "load", "live", "stream B", "page wall")
	line := func(name string, l *load) {
		t := l.times
		out.printf("%-4s %9.1f %5d %7.0f %7.0f %7.0f %7.0f %7.0f %9.0f %9.0f ms",
			name, l.total/1024, len(l.resources), t.TTFB, t.FCP, t.DCL, t.Load, t.Snapshot, float64(l.stream.decoded), ms(l.wall))
	}
	line("0", warm)
	var kb, reqs, ttfb, fcp, dcl, ld, live, wall []float64
	for i, l := range loads {
		t := l.times
		line(fmt.Sprint(i+1), l)
		kb, reqs = append(kb, l.total/1024), append(reqs, float64(len(l.resources)))
		ttfb, fcp, dcl = append(ttfb, t.TTFB), append(fcp, t.FCP), append(dcl, t.DCL)
		ld, live, wall = append(ld, t.Load), append(live, t.Snapshot), append(wall, ms(l.wall))
	}
	row := func(name string, pick func(float64, float64) float64) {
		f := func(xs []float64) float64 { med, mx := medianMax(xs); return pick(med, mx) }
		out.printf("%-4s %9.1f %5.0f %7.0f %7.0f %7.0f %7.0f %7.0f %9s %9.0f ms",
			name, f(kb), f(reqs), f(ttfb), f(fcp), f(dcl), f(ld), f(live), "", f(wall))
	}
	row("med", func(med, _ float64) float64 { return med })
	row("max", func(_, mx float64) float64 { return mx })
	out.printf("(KB: bytes transferred, headers included, every request but the event stream; times in ms from the navigation's start: " +
		"TTFB the document's first byte, FCP first contentful paint, DCL DOMContentLoaded end, load the load event's end, " +
		"live the first snapshot of the event stream applied to the page; load 0 is not counted: the browser's first load of the page, the campaign's first stream; stream B: the event stream's body bytes until the page was quiet, not compressed, headers not counted)")

	m := loads[0]
	medKB, _ := medianMax(kb)
	for _, l := range loads {
		if l.total/1024 == medKB {
			m = l
			break
		}
	}
	out.printf("requests of the median load: %s", m.byKind())
	out.printf("  %-58s %-11s %4s %-5s %9s %9s %8s", "path", "type", "code", "enc", "transfer", "decoded", "time")
	for _, r := range m.resources {
		if !r.finished {
			out.printf("  %-58s %-11s %4d %-5s (Chromium reported no end: not counted)", trim(r.path, 58), r.typ, r.status, r.encoding)
			continue
		}
		out.printf("  %-58s %-11s %4d %-5s %9.0f %9d %6.0f ms", trim(r.path, 58), r.typ, r.status, r.encoding, r.transfer, r.decoded, (r.done-r.sent)*1000)
	}
	s := m.stream
	doc := m.resources[0]
	out.printf("  %-58s %-11s %4d %-5s %9s %9d (open; %d messages until quiet; requested at %.0f ms, first message at %.0f ms after the document's request)",
		trim(s.path, 58), s.typ, s.status, s.encoding, "", s.decoded, s.messages, (s.sent-doc.sent)*1000, (s.firstMsg-doc.sent)*1000)
	ev := m.times.Events
	out.printf("events the page handled until quiet: campaign %d, log %d, call %d; in flight shown: %s", ev["campaign"], ev["log"], ev["call"], m.times.InFlight)
}

// openPageCPU measures the service's CPU over cfg.idleFor with no console
// page open, then with one tab on the big campaign's page, then on the
// small one's (both campaigns dialing slowly all along).
func openPageCPU(cfg config, out *report, svc *service, b *browser, big, small int64) {
	out.printf("")
	out.printf("### Service CPU with one campaign page open (each over %v; both campaigns dialing slowly)", cfg.idleFor)
	pid := svc.srv.Pid()
	measure := func(name string, id int64) {
		var cancel func()
		if id != 0 {
			ctx, c, err := b.newSession(svc.srv.Base, svc.key)
			if err != nil {
				svc.srv.Fail("%v", err)
			}
			cancel = c
			if err := openCampaign(ctx, svc.srv.Base+campaignPage(id)); err != nil {
				svc.srv.Fail("%v", err)
			}
			time.Sleep(2 * time.Second) // the page's first requests over
		}
		load0 := realbin.LoadAvg()
		cpu0, br0 := realbin.ProcCPU(pid), treeCPU(b.pid)
		time.Sleep(cfg.idleFor)
		cpu, br := realbin.ProcCPU(pid)-cpu0, treeCPU(b.pid)-br0
		if cancel != nil {
			cancel()
		}
		browserCPU := "" // with no page open, the renderers of earlier tabs may end during the reading
		if id != 0 {
			browserCPU = fmt.Sprintf(", Chromium %.2f CPU-s", br.Seconds())
		}
		out.printf("  %-34s service %6.3f CPU-s (%5.1f ms per s)%s; load average %s, after %s",
			name, cpu.Seconds(), ms(cpu)/cfg.idleFor.Seconds(), browserCPU, load0, realbin.LoadAvg())
	}
	measure("no page open", 0)
	measure(fmt.Sprintf("campaign of %d contacts open", cfg.rows), big)
	measure(fmt.Sprintf("campaign of %d contacts open", cfg.smallRows), small)
}

// trim shortens s to n characters.
func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// report is the program's output, printed at the end (the service's and
// the browser's logs go to stderr as it runs).
type report struct{ lines []string }

func (r *report) printf(format string, a ...any) {
	r.lines = append(r.lines, fmt.Sprintf(format, a...))
	log.Printf(format, a...)
}
