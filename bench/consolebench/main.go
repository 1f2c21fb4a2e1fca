// Command consolebench measures the operator console, issue 13's
// "Measure", through the real binary and headless Chromium over loopback:
//
//	go run ./bench/consolebench                 # both measures (about 11 minutes on 2 cores)
//	go run ./bench/consolebench -run load       # the page load only
//	go run ./bench/consolebench -run cpu        # the dialer's CPU with and without open pages only
//	go run ./bench/consolebench -rows 100000 -loads 3 -cpu-runs 1   # a quick check
//
// Like bench/dialbench it builds the binary (or takes -bin), creates an API
// key with it, starts `outdial serve` on a fresh data directory with
// OUTDIAL_TWILIO_API_URL pointing at the Twilio simulator running in this
// process, and sets the organization up over HTTP as a client would (the
// compliance policy of -policy, by default calling hours off, so that no
// call is held at night in its zone; a Twilio configuration with the
// simulator's credentials, a caller id, a workflow). Chromium (-chromium,
// Debian's /usr/bin/chromium, installed by .ci/chromium.sh) is started as
// web/console/browsertest starts it: headless, no sandbox, no GPU, no
// QUIC, no background networking, a fresh --user-data-dir.
//
// The page load (-run load): a campaign of -rows contacts (1,000,000) and
// one of -small-rows (10), both running, slowly (2 calls at once, each
// ringing 30 s then talking 10 s), so that the page is a running
// campaign's, with calls in flight. For each campaign, -loads times (after
// one load not counted), in a new browser context signed in through the
// sign-in form with the API key, with the cache disabled
// (Network.setCacheDisabled), the campaign page is loaded and measured:
// the bytes transferred (loadingFinished.encodedDataLength, headers
// included) of every request the page makes, HTML, CSS, JS and the API
// calls of its scripts, listed by request, the event stream counted apart;
// the document's first byte, first contentful paint, DOMContentLoaded and
// load (the Navigation and Paint Timing entries), and the time until the
// page has applied the event stream's first snapshot (a hook wraps the
// page's EventSource listeners). A load ends once the snapshot is applied
// and the page's other requests have ended, none for -quiet. Then the API
// calls behind the page (GET campaign, /diagnosis, a page of /calls) are
// timed alone, and the service's CPU is read over -idle-for with no page
// open, then with one tab on each campaign's page. Last, tabs of one
// signed-in browser profile are opened on the big campaign's page one after
// the other (up to 8): how many become live, since Chromium keeps at most
// 6 HTTP/1.1 connections to a host per profile and each live page holds
// one with its event stream.
//
// The dialer's CPU (-run cpu): bench/dialbench's campaign (-contacts 20,000,
// max_concurrency 500, rate_limit_per_second 1,000, calls answered at once
// and talking 50 ms) run -cpu-runs times in each mode, alternating: with no
// page open, then with -tabs (10) pages on its campaign page, each in a
// browser context of its own (an operator each: one profile could not
// hold more than 6 live pages), signed in through the form and live (each
// has applied a snapshot before the start), each run on a fresh service
// and data directory. Reported per run: completed calls/s
// (start request to completion seen by polling every 100 ms), the
// service's CPU time (utime + stime, /proc/<pid>/stat) over the dialing
// phase and per 1,000 calls, Chromium's (its process tree), every other
// process's (the machine is shared), and the load average before and after;
// then the medians of each mode and their difference. After each run with
// pages, every page must show the state completed.
//
// Linux only (/proc).
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/outdial/outdial/bench/internal/realbin"
)

// config is the run's flags.
type config struct {
	bin, tmp, chromium, policy string
	rows, smallRows, loads     int
	quiet, idleFor             time.Duration
	contacts, concurrency      int
	rate                       float64
	talk                       time.Duration
	tabs, cpuRuns              int
}

func main() {
	var cfg config
	run := flag.String("run", "load,cpu", "measures to run, comma-separated: load (page load, cold cache), cpu (dialer CPU with and without open pages)")
	flag.IntVar(&cfg.rows, "rows", 1000000, "contacts of the big campaign (page load)")
	flag.IntVar(&cfg.smallRows, "small-rows", 10, "contacts of the small campaign (page load)")
	flag.IntVar(&cfg.loads, "loads", 5, "cold loads of each campaign's page counted (after one not counted)")
	flag.DurationVar(&cfg.quiet, "quiet", time.Second, "a load ends once no request but the event stream started or ended for this long")
	flag.DurationVar(&cfg.idleFor, "idle-for", time.Minute, "how long the service's CPU is read with no page, then one page, open (0: not measured)")
	flag.IntVar(&cfg.contacts, "contacts", 20000, "contacts of the dialer benchmark's campaign (cpu)")
	flag.IntVar(&cfg.concurrency, "concurrency", 500, "its max_concurrency")
	flag.Float64Var(&cfg.rate, "rate", 1000, "its rate_limit_per_second")
	flag.DurationVar(&cfg.talk, "talk", 50*time.Millisecond, "time from the answer to the final status callback")
	flag.IntVar(&cfg.tabs, "tabs", 10, "campaign pages open during the runs with pages")
	flag.IntVar(&cfg.cpuRuns, "cpu-runs", 3, "runs of each mode (without pages, with), alternating")
	flag.StringVar(&cfg.chromium, "chromium", "/usr/bin/chromium", "the Chromium binary")
	bin := flag.String("bin", "", "outdial binary to run (default: go build into a temporary directory)")
	keep := flag.Bool("keep", false, "keep the temporary directory (data, service logs)")
	policy := realbin.PolicyFlag()
	flag.Parse()
	log.SetFlags(0)
	cfg.policy = *policy
	runs := map[string]bool{}
	for _, r := range strings.Split(*run, ",") {
		switch r = strings.TrimSpace(r); r {
		case "load", "cpu":
			runs[r] = true
		default:
			log.Fatalf("-run %q: want load, cpu or both", r)
		}
	}
	if err := realbin.CheckNumbers(max(cfg.rows+cfg.smallRows, cfg.contacts)); err != nil {
		log.Fatal(err)
	}

	tmp, binary, cleanup, err := realbin.Workdir("consolebench", *keep, *bin)
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	cfg.bin, cfg.tmp = binary, tmp

	var out report
	load0 := realbin.LoadAvg()
	if runs["load"] {
		measureLoads(cfg, &out)
	}
	if runs["cpu"] {
		measureDialCPU(cfg, &out)
	}
	fmt.Fprintf(os.Stdout, "\n%s\nload average at the start %s, at the end %s\n", strings.Join(out.lines, "\n"), load0, realbin.LoadAvg())
}
