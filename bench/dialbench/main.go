// Command dialbench measures the dialer end to end, issue 5's "Measure": a
// campaign of 20,000 contacts with max_concurrency 500 and
// rate_limit_per_second 1000, run by the real binary through the real HTTP
// path against the Twilio simulator over loopback, which answers every call
// at once and posts its final status 50 ms later.
//
//	go run ./bench/dialbench
//	go run ./bench/dialbench -guard        # against a 1,000,000-number suppression list, calling hours on
//	go run ./bench/dialbench -cpuprofile /tmp/serve.pprof   # then: go tool pprof -top /tmp/outdial /tmp/serve.pprof
//	go run ./bench/dialbench -metrics-addr ''   # metrics off (default: on, on a free port)
//	go run ./bench/dialbench -streams 20        # 20 event-stream clients of the campaign, one never reading
//	go run ./bench/dialbench -idle-streams 100  # first: 100 open streams of the draft campaign, CPU over 30 s
//	go run ./bench/dialbench -database-url postgres://USER@HOST/EMPTYDB -nodes 3   # PostgreSQL, 3 nodes (API.md 16)
//
// It builds the binary (or takes -bin), creates an API key with it, starts
// `outdial serve` as a subprocess on a fresh data directory with
// OUTDIAL_TWILIO_API_URL pointing at the simulator (which runs in this
// process), and sets the campaign up as a client would: the compliance
// policy (-policy: by default calling hours off, since the benchmark
// measures the dialer at any hour and the default 08:00-21:00 callee-local
// would hold every call while its zones are at night), a Twilio
// configuration with the simulator's credentials, a caller id, a workflow,
// a presigned upload of the contacts CSV, the campaign. Then it starts the
// campaign and waits for it to complete.
//
// With -guard (API.md 12) it first imports -suppressions numbers, none of
// them the campaign's, into the organization's suppression list (a CSV
// through a presigned upload, then POST /api/v1/suppressions with its
// source_id) and opens calling hours all day (realbin.OpenAllDay), so every
// call is looked up in that list and goes through the calling-hours check
// of its zones, and none is held or suppressed; it checks the evidence of
// the campaign's first call says so.
//
// Metrics (serve --metrics-addr) are on by default, on a free loopback port
// (-metrics-addr free), so that the measure includes their cost and a
// service whose default 127.0.0.1:9464 is taken does not silently run
// without them; /metrics is scraped once after the campaign, and its
// outdial_calls_placed_total must equal the campaign's executed_count.
// An empty -metrics-addr (-metrics-addr="") measures the service with metrics off.
//
// With -database-url (an empty PostgreSQL database: create one with psql
// and drop it after) the service keeps its state there instead: the
// benchmark starts versitygw on a free port as the remote S3 store serve
// needs beside a database URL, makes a shared server secret
// (OUTDIAL_SECRET_KEY), creates the API key with `outdial apikey create
// --database-url` and starts -nodes serve processes on the database
// (--node-name node1, node2, ...; each its own data directory and metrics
// port). With more than one node a round-robin reverse proxy in this
// process is their --public-url, so the simulator's webhooks land on every
// node in turn, and the base of every API call (realbin.Cluster). One
// campaign is dialed by one node, the holder of its lease; the others
// apply the webhooks of its calls.
//
// Reported: completed calls per second from the start request to the
// campaign's completion (measured here, and from the campaign's own
// started_at/completed_at), the simulator's peak number of calls in flight,
// the service process's CPU time (utime + stime from /proc/<pid>/stat) per
// 1,000 calls over the dialing phase only, and its peak RSS (VmHWM from
// /proc/<pid>/status, the whole run including the campaign creation). The
// simulator and this program share the machine's cores with the service;
// their own CPU time is reported too. With several nodes the CPU is summed
// over all of them (and given per node), the peak RSS given per node. On
// PostgreSQL the CPU time of the database's server processes serving the
// benchmark's database (realbin.BackendCPU: the server must run on this
// machine) is reported beside the service's, since on SQLite that work is
// inside serve. Linux only (/proc).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/outdial/outdial/bench/internal/realbin"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// Targets of issue 5 on 2 cores.
const (
	targetCallsPerSecond = 900
	targetCPUPer1000     = 1.0
	targetRSSMB          = 150
)

func main() {
	contacts := flag.Int("contacts", 20000, "contacts in the campaign")
	concurrency := flag.Int("concurrency", 500, "campaign max_concurrency")
	rate := flag.Float64("rate", 1000, "campaign rate_limit_per_second")
	talk := flag.Duration("talk", 50*time.Millisecond, "time from the answer to the final status callback")
	bin := flag.String("bin", "", "outdial binary to run (default: go build into a temporary directory)")
	cpuprofile := flag.String("cpuprofile", "", "have the service write a CPU profile of its whole run to this file (serve --cpuprofile; node I of several writes FILE.nodeI)")
	keep := flag.Bool("keep", false, "keep the temporary directory (data, service log)")
	guard := flag.Bool("guard", false, "before the campaign, import -suppressions numbers (none of them the campaign's) into the suppression list "+
		"and open calling hours all day, so that every call goes through both checks")
	suppressions := flag.Int("suppressions", 1000000, "numbers imported into the suppression list with -guard")
	metricsAddr := flag.String("metrics-addr", "free", "serve --metrics-addr: \"free\" (a free loopback port: metrics on, scraped "+
		"once at the end to check them), an address, or \"\" (metrics off)")
	policy := realbin.PolicyFlag()
	nStreams := flag.Int("streams", 0, "event-stream clients of the campaign during the dialing phase (API.md 10): all but one read every event, one never reads")
	idle := flag.Int("idle-streams", 0, "before the campaign starts, open this many streams of it and measure the service's CPU while nothing happens")
	idleFor := flag.Duration("idle-for", 30*time.Second, "how long -idle-streams measures")
	databaseURL := flag.String("database-url", "", "an empty PostgreSQL database (postgres://...) to run on instead of a SQLite data directory; "+
		"versitygw is started as the S3 store (.ci/versitygw.sh installs it, or set OUTDIAL_VERSITYGW)")
	nodes := flag.Int("nodes", 1, "serve processes on the -database-url database, behind a round-robin proxy when more than one")
	maxWait := flag.Duration("max-wait", 10*time.Minute, "fail when the campaign is still running this long after its start")
	orgLimit := flag.Int("org-limit", 0, "set the organization's max_concurrent_calls (API.md 19) before the campaign starts; 0: no limit")
	flag.Parse()
	log.SetFlags(0)
	if *guard {
		flag.Visit(func(f *flag.Flag) {
			if f.Name == "policy" {
				log.Fatal("-guard sets the compliance policy itself (calling hours open all day): leave -policy out")
			}
		})
		*policy = realbin.OpenAllDay
		if err := realbin.CheckNumbers(*suppressions); err != nil {
			log.Fatal(err)
		}
	}
	if *nodes != 1 && (*databaseURL == "" || *nodes < 1) {
		log.Fatal("-nodes: 1, or more with -database-url (a SQLite file belongs to one process)")
	}
	if *nodes > 1 && *metricsAddr != "free" && *metricsAddr != "" {
		log.Fatal("-metrics-addr: \"free\" or \"\" with several nodes (each needs its own port)")
	}

	tmp, binary, cleanup, err := realbin.Workdir("dialbench", *keep, *bin)
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	*bin = binary

	sim := twiliosim.Start(twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: *talk}
	}})
	defer sim.Close()

	db, err := realbin.OpenDatabase(tmp, *databaseURL)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	env := db.Env("OUTDIAL_TWILIO_API_URL=" + sim.URL())
	key := db.APIKey(*bin, "bench", env)

	metricsAddrs := make([]string, *nodes)
	for i := range metricsAddrs {
		metricsAddrs[i] = *metricsAddr
		if *metricsAddr == "free" {
			metricsAddrs[i] = realbin.FreeAddr()
		}
	}
	cl := realbin.StartCluster(realbin.ClusterConfig{Bin: *bin, DB: db, Nodes: *nodes, Dir: tmp, Env: env,
		Args: func(i int) []string {
			var args []string
			if *cpuprofile != "" {
				args = append(args, "--cpuprofile", profilePath(*cpuprofile, i))
			}
			return append(args, "--metrics-addr", metricsAddrs[i-1])
		}})
	fail := cl.Fail
	c := cl.Client(key)

	// Setup, as a client would do it.
	setupStart := time.Now()
	pol := c.SetCompliance(*policy)
	if *orgLimit > 0 {
		c.Do(http.MethodPut, "/api/v1/organizations/limits", map[string]any{"max_concurrent_calls": *orgLimit})
		fmt.Printf("organization limit: max_concurrent_calls %d\n", *orgLimit)
	}
	var guardLine string
	if *guard {
		guardLine = importSuppressions(c, cl, *suppressions)
	}
	cfg := c.Post("/api/v1/organizations/telephony-configs", map[string]any{
		"name": "sim", "is_default_outbound": true,
		"config": map[string]any{"provider": "twilio", "account_sid": sim.AccountSID(), "auth_token": sim.AuthToken()},
	})
	c.Post(fmt.Sprintf("/api/v1/organizations/telephony-configs/%v/phone-numbers", cfg["id"]),
		map[string]any{"address": "+14155550100", "is_default_caller_id": true})
	wf := c.Post("/api/v1/workflow", map[string]any{"name": "reminder", "workflow_definition": json.RawMessage(workflow)})
	csv := contactsCSV(*contacts)
	source := c.UploadCSV("contacts.csv", csv)
	createStart := time.Now()
	camp := c.Post("/api/v1/campaign", map[string]any{
		"name": "bench", "workflow_id": wf["id"], "source_id": source,
		"max_concurrency": *concurrency, "rate_limit_per_second": *rate,
	})
	createTime := time.Since(createStart)
	id := int64(camp["id"].(float64))
	if int(camp["total_rows"].(float64)) != *contacts {
		fail("campaign has %v contacts, want %d", camp["total_rows"], *contacts)
	}
	log.Printf("setup %.2f s (campaign create with %d contacts, %d KB CSV: %.2f s)",
		time.Since(setupStart).Seconds(), *contacts, len(csv)>>10, createTime.Seconds())

	eventsPath := fmt.Sprintf("/api/v1/campaign/%d/events", id)
	var idleLine string
	if *idle > 0 {
		idleLine = idleStreams(cl, key, eventsPath, *idle, *idleFor)
	}
	streams := openStreams(cl.Base, cl.Addr, key, eventsPath, *nStreams)
	defer streams.close()

	// The dialing phase.
	r := run{contacts: *contacts, concurrency: *concurrency, rate: *rate, talk: *talk, db: db, cl: cl}
	r.load0 = realbin.LoadAvg()
	runtime.GC()
	cpu0 := nodeCPU(cl)
	pg0 := db.BackendCPU()
	self0 := realbin.SelfCPU()
	busy0 := realbin.MachineBusy()
	sim.ResetPeak()
	simStart := sim.Stats()
	start := time.Now()
	c.Post(fmt.Sprintf("/api/v1/campaign/%d/start", id), nil)
	r.rssPeak = make([]int64, *nodes)
	var dialedBy []string // dialed_by's changes while polled
	lastBy := "?"
	for {
		time.Sleep(100 * time.Millisecond)
		for i, kb := range cl.StatusKB("VmRSS") {
			r.rssPeak[i] = max(r.rssPeak[i], kb)
		}
		r.final = c.Get(fmt.Sprintf("/api/v1/campaign/%d", id))
		by, _ := r.final["dialed_by"].(string)
		if by == "" {
			by = "null"
		}
		if by != lastBy {
			dialedBy = append(dialedBy, fmt.Sprintf("%s from %.1f s", by, time.Since(start).Seconds()))
			lastBy = by
		}
		if r.final["state"] != "running" {
			break
		}
		if time.Since(start) > *maxWait {
			fail("campaign still running after %v (-max-wait): %v", *maxWait, r.final)
		}
	}
	r.wall = time.Since(start)
	cpu1 := nodeCPU(cl)
	pg1 := db.BackendCPU()
	r.self = realbin.SelfCPU() - self0
	r.busy = realbin.MachineBusy() - busy0
	r.hwm = cl.StatusKB("VmHWM")
	st := sim.Stats()
	r.nodeCPU = make([]time.Duration, *nodes)
	for i := range cpu1 {
		r.nodeCPU[i] = cpu1[i] - cpu0[i]
		r.cpu += r.nodeCPU[i]
	}
	r.pgCPU, r.pgBackends = pg1.Since(pg0), pg1.Count()
	r.dialedBy = strings.Join(dialedBy, ", ")

	final := r.final
	if final["state"] != "completed" {
		fail("campaign ended %v: %v", final["state"], final)
	}
	r.calls = int(final["executed_count"].(float64))
	if *guard && r.calls != *contacts {
		fail("with -guard every contact must be called (none suppressed, none held): executed_count %d of %d: %v", r.calls, *contacts, final)
	}
	evidence, ev := firstEvidence(c, id)
	if *guard && (ev["suppression"] != "clear" || ev["calling_hours"] != "open") {
		fail("with -guard the first call's evidence must say suppression clear, calling_hours open: %s", evidence)
	}
	started, _ := time.Parse(time.RFC3339Nano, final["started_at"].(string))
	completed, _ := time.Parse(time.RFC3339Nano, final["completed_at"].(string))
	r.span = completed.Sub(started)

	metricsLine := "off (--metrics-addr '')"
	if *metricsAddr != "" {
		metricsLine = scrapeMetrics(metricsAddrs, cl.Names, r.calls)
	}

	streamsLine := "none"
	if *nStreams > 0 {
		if !streams.wait(10 * time.Second) {
			fail("the campaign's event streams did not end within 10 s of its completion: %s", streams)
		}
		streamsLine = fmt.Sprintf("%d clients (%d reading, 1 never reading): %s", *nStreams, *nStreams-1, streams)
	}

	// Stop the service cleanly (writes the CPU profile).
	cl.Stop(15 * time.Second)

	r.printHeader()
	fmt.Printf("compliance policy: %s\n", policyLine(pol))
	if guardLine != "" {
		fmt.Printf("guard: %s\n", guardLine)
	}
	fmt.Printf("evidence of the first call: %s\n", evidence)
	fmt.Printf("metrics: %s\n", metricsLine)
	fmt.Printf("event streams: %s\n", streamsLine)
	if idleLine != "" {
		fmt.Printf("idle streams: %s\n", idleLine)
	}
	fmt.Printf("result: %s, processed_rows %v, failed_rows %v, executed_count %d, simulator created %d calls (%d creates, %d 429s, %d callback errors)\n",
		final["state"], final["processed_rows"], final["failed_rows"], r.calls, st.Created-simStart.Created,
		st.CreateRequests-simStart.CreateRequests, st.RateLimited-simStart.RateLimited, st.CallbackErrors-simStart.CallbackErrors)
	r.printFigures(st.PeakInFlight)
	if *cpuprofile != "" {
		for i := 1; i <= *nodes; i++ {
			fmt.Printf("CPU profile: go tool pprof -top %s %s\n", *bin, profilePath(*cpuprofile, i))
		}
	}
}

// profilePath is node i's --cpuprofile: path for the first node (the only
// one on SQLite), path.nodeI for the others.
func profilePath(path string, i int) string {
	if i == 1 {
		return path
	}
	return fmt.Sprintf("%s.node%d", path, i)
}

// nodeCPU is each node's CPU time.
func nodeCPU(cl *realbin.Cluster) []time.Duration {
	cpu := make([]time.Duration, len(cl.Nodes))
	for i, pid := range cl.Pids() {
		cpu[i] = realbin.ProcCPU(pid)
	}
	return cpu
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

// workflow is a valid workflow: a start node with a greeting, an end node,
// one edge.
const workflow = `{"nodes":[` +
	`{"id":"start","type":"startCall","position":{"x":0,"y":0},"data":{"name":"Greeting","prompt":"You are calling {{first_name}} {{last_name}}.","greeting":"Hello {{first_name}}, this is a reminder."}},` +
	`{"id":"bye","type":"endCall","position":{"x":200,"y":0},"data":{"name":"Goodbye","prompt":"Say goodbye."}}],` +
	`"edges":[{"id":"e1","source":"start","target":"bye","data":{"label":"Done","condition":"The reminder was delivered"}}]}`

// contactsCSV returns a contacts file of n rows with distinct valid US
// numbers (eight area codes, exchange 555) and three more columns.
func contactsCSV(n int) []byte {
	areas := []string{"415", "212", "312", "646", "718", "305", "617", "202"}
	first := []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Margaret", "Kenneth"}
	last := []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Hamilton", "Thompson"}
	city := []string{"London", "New York", "Paris", "Berlin", "Mumbai", "Sydney", "Sao Paulo", "San Francisco"}
	var b bytes.Buffer
	b.WriteString("phone_number,first_name,last_name,city\n")
	for i := range n {
		fmt.Fprintf(&b, "+1%s555%04d,%s,%s,%s\n", areas[i%len(areas)], (i/len(areas))%10000, first[i%8], last[(i/8)%8], city[(i/64)%8])
	}
	return b.Bytes()
}
