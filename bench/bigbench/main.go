// Command bigbench measures issue 10's million-contact path end to end,
// through the real binary over HTTP on a fresh data directory, as a client
// would use it (API.md sections 3, 4 and 9):
//
//	go run ./bench/bigbench
//	go run ./bench/bigbench -rows 50000 -dial-calls 2000     # a quick check
//	go run ./bench/bigbench -cpuprofile /tmp/serve.pprof     # then: go tool pprof -top /tmp/outdial /tmp/serve.pprof
//	go run ./bench/bigbench -database-url postgres://USER@HOST/EMPTYDB -dial-calls 5000   # on PostgreSQL (API.md 16)
//
// Like bench/dialbench it builds the binary (or takes -bin), creates API
// keys for two organizations ("bench" and "other"), starts `outdial serve`
// with OUTDIAL_TWILIO_API_URL pointing at the Twilio simulator running in
// this process, and sets each organization up over HTTP (the compliance
// policy of -policy, by default calling hours off so that calls are not
// held at night in their zones; a Twilio configuration with the
// simulator's credentials, a caller id, a workflow).
// Then, in order:
//
//  1. upload: a CSV of -rows rows (phone_number,first_name,last_name,city;
//     distinct valid US numbers, 45 MB for a million) through a presigned
//     URL;
//  2. create: with a "victim" campaign of the other organization already
//     dialing (3,000 contacts, max_concurrency 20, rate_limit_per_second 50,
//     calls talking 200 ms), POST /api/v1/campaign of the big file: the time
//     to the answer, the service's RSS before and its peak (VmRSS every
//     20 ms), the victim's longest gap between two call creates at the
//     simulator, and the longest answer of GET /api/v1/health and of the
//     victim's GET /api/v1/campaign/{id}, each polled every 50 ms;
//  3. database: outdial.db and outdial.db-wal sizes, bytes per contact;
//  4. dialing with every contact queued: the big campaign (max_concurrency
//     500, rate_limit_per_second 1000, calls talking 50 ms, one number in
//     ten busy) runs until -dial-calls calls were placed (executed_count):
//     calls/s, the service's CPU per 1,000 calls (/proc/<pid>/stat) and its
//     RSS at the start, half-way and end; then it is paused;
//  5. paging: GET /calls?limit=100, median of 20 requests, of the first
//     page and of a page near the end (after_id 150 rows before the last
//     matching attempt), with no filter, state=done, outcome=answered and
//     state=queued;
//  6. report: GET /report streamed to the end: time, RSS growth, lines;
//  7. cancel, then redial (the busy contacts among those dialed), each with
//     a victim dialing; then (-synthetic-redial, default on) the service is
//     stopped, every contact of the big campaign is made final busy with a
//     direct SQLite UPDATE, the service restarted and the whole list
//     redialed;
//  8. delete: DELETE of the big campaign and of its full redial, then the
//     time until their rows are gone (a read-only SQLite connection polls
//     every 200 ms), with a victim dialing.
//
// With -database-url (an empty PostgreSQL database: create one with psql
// and drop it after) the service runs on PostgreSQL as one node, as
// bench/dialbench runs it (realbin.Database: versitygw started as its S3
// store, the shared secret, the API keys from `outdial apikey create
// --database-url`); the create goes through COPY there. The benchmark's
// own reads (counts, the purge's progress, the deep page's id) go to that
// database; its size is pg_database_size (PostgreSQL's WAL is the
// cluster's, not measured); the CPU of the database's server processes
// is given beside serve's (realbin.BackendCPU). Phase 7's synthetic
// redial edits the SQLite file and is skipped, saying so.
//
// Every figure is printed with the machine's CPUs, Go version and load
// average, beside issue 10's targets (for 1,000,000 rows) with ok or
// MISSED. The simulator and this program share the machine's cores with the
// service. Linux only (/proc).
package main

import (
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

// Targets of issue 10 and API.md section 9 on 2 cores, for 1,000,000 rows.
// Where the issue says "a few hundred ms" or "seconds", bigbench reads 300
// ms and 10 s; the dialer's figures are bench/dialbench's (issue 5), which
// must not get worse with a million contacts queued.
const (
	targetCreateSeconds  = 8   // create answers within
	targetCreateRSSMB    = 100 // RSS growth during the create
	targetStallMS        = 300 // longest gap between a running campaign's call creates
	targetAPIMS          = 300 // longest API answer while a big operation runs
	targetWALMB          = 64  // WAL left after the import (the store's journal_size_limit)
	targetCallsPerSecond = 900 // dialbench
	targetCPUPer1000     = 1.0 // dialbench, CPU-seconds
	targetRSSMB          = 150 // dialbench, peak while dialing
	targetFlatMB         = 10  // RSS peak growth from the 2nd to the 4th quarter of the dialing phase
	targetReportSeconds  = 10  // the issue measured 3.7 s before: keep it
	targetReportRSSMB    = 20  // the issue measured +13 MB before: keep it
	targetOpSeconds      = 10  // cancel, redial, delete requests; purge per million contacts
)

// Caller ids of the two organizations: the simulator tells the victim's
// calls from the big campaign's by their From.
const (
	benchCaller  = "+14155550100"
	victimCaller = "+14155550101"
)

// bench is one run: the service, its two API clients, the simulator.
type bench struct {
	rows, victimRows, dialCalls int
	talk, victimTalk            time.Duration
	bin, tmp                    string
	db                          *realbin.Database
	cpuprofile                  string
	policy                      string // compliance policy PUT for both organizations
	env                         []string
	keyBench, keyOther          string

	sim    *twiliosim.Server
	victim creates
	srv    *realbin.Server
	serves int             // serve processes started
	c, o   *realbin.Client // the bench and the other organization
	ro     *reader         // the benchmark's reads of the database

	wfBench, wfOther         any
	bigSource                string
	victimCSV, longVictimCSV []byte
	big, redial, fullRedial  int64

	out strings.Builder // the report, printed at the end
}

func main() {
	rows := flag.Int("rows", 1000000, "contacts in the big campaign")
	dialCalls := flag.Int("dial-calls", 20000, "calls of the big campaign to place in the dialing phase")
	victimRows := flag.Int("victim-rows", 3000, "contacts of a victim campaign (the one during the purge has three times as many)")
	synthetic := flag.Bool("synthetic-redial", true, "stop the service, mark every contact final busy in SQLite, restart and redial them all (SQLite only)")
	databaseURL := flag.String("database-url", "", "an empty PostgreSQL database (postgres://...) to run on instead of a SQLite data directory; "+
		"versitygw is started as the S3 store (.ci/versitygw.sh installs it, or set OUTDIAL_VERSITYGW)")
	bin := flag.String("bin", "", "outdial binary to run (default: go build into a temporary directory)")
	cpuprofile := flag.String("cpuprofile", "", "have the service write a CPU profile to this file (serve --cpuprofile; the restarted service's goes to FILE.restart)")
	keep := flag.Bool("keep", false, "keep the temporary directory (data, service log)")
	policy := realbin.PolicyFlag()
	flag.Parse()
	log.SetFlags(0)
	if *dialCalls >= *rows {
		log.Fatalf("-dial-calls (%d) must be below -rows (%d)", *dialCalls, *rows)
	}
	// Pollers, the create and the simulator's webhooks run side by side.
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = 64

	tmp, binary, cleanup, err := realbin.Workdir("bigbench", *keep, *bin)
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	*bin = binary
	if err := realbin.CheckNumbers(realbin.MaxNumbers); err != nil {
		log.Fatal(err)
	}
	if *rows+4*(*victimRows) > realbin.MaxNumbers {
		log.Fatalf("-rows plus three victims' rows must stay within %d distinct numbers", realbin.MaxNumbers)
	}

	b := &bench{rows: *rows, victimRows: *victimRows, dialCalls: *dialCalls,
		talk: 50 * time.Millisecond, victimTalk: 200 * time.Millisecond,
		bin: *bin, tmp: tmp, cpuprofile: *cpuprofile, policy: *policy}
	b.sim = twiliosim.Start(twiliosim.Config{Script: b.script})
	defer b.sim.Close()
	b.db, err = realbin.OpenDatabase(tmp, *databaseURL)
	if err != nil {
		log.Fatal(err)
	}
	defer b.db.Close()
	b.env = b.db.Env("OUTDIAL_TWILIO_API_URL=" + b.sim.URL())
	b.keyBench = b.db.APIKey(b.bin, "bench", b.env)
	b.keyOther = b.db.APIKey(b.bin, "other", b.env)

	load0 := realbin.LoadAvg()
	b.serve()
	b.setup()
	b.create()
	b.dial()
	b.paging()
	b.report()
	b.cancelAndRedial()
	switch {
	case *synthetic && b.db.Postgres():
		b.printf("synthetic redial: skipped on PostgreSQL (it stops the service and edits the SQLite file)")
	case *synthetic:
		b.syntheticRedial()
	}
	b.deleteAndPurge()
	b.ro.Close()
	b.srv.Stop(30 * time.Second)

	fmt.Printf("machine: %d CPUs, %s, %s/%s; load average before %s, after %s\n",
		runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, load0, realbin.LoadAvg())
	if b.db.Postgres() {
		fmt.Printf("database: PostgreSQL %s, one serve node; S3 store versitygw at %s\n", realbin.RedactURL(b.db.URL), b.db.S3.Addr)
	}
	fmt.Print(b.out.String())
	if b.cpuprofile != "" {
		fmt.Printf("CPU profile: go tool pprof -top %s %s (after the restart: %s.restart)\n", b.bin, b.cpuprofile, b.cpuprofile)
	}
}

// script plays every simulated call: the victims' answer and talk 200 ms
// (their creates are recorded), the big campaign's answer and talk 50 ms,
// except one number in ten, busy.
func (b *bench) script(ci twiliosim.CallInfo) twiliosim.Script {
	if ci.From == victimCaller {
		t := ci.Created
		if t.IsZero() {
			t = time.Now()
		}
		b.victim.add(t)
		return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: b.victimTalk}
	}
	if busyNumber(ci.To) {
		return twiliosim.Script{Outcome: twiliosim.Busy}
	}
	return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: b.talk}
}

// serve starts (or restarts) the service and (re)connects the clients and
// the read-only database connection.
func (b *bench) serve() {
	var args []string
	if b.cpuprofile != "" {
		p := b.cpuprofile
		if b.serves > 0 {
			p += ".restart"
		}
		args = append(args, "--cpuprofile", p)
	}
	cl := realbin.StartCluster(realbin.ClusterConfig{Bin: b.bin, DB: b.db, Nodes: 1, Dir: b.tmp, Env: b.env,
		Args: func(int) []string { return args }})
	b.srv = cl.Nodes[0]
	b.serves++
	b.c, b.o = b.srv.Client(b.keyBench), b.srv.Client(b.keyOther)
	b.c.Fail, b.o.Fail = b.fail, b.fail
	ro, err := openReader(b.db)
	if err != nil {
		b.srv.Fail("open the database read-only: %v", err)
	}
	b.ro = ro
}

// fail prints the figures measured so far, then fails through the
// service's Fail (which kills it and shows the tail of its log).
func (b *bench) fail(format string, a ...any) {
	if b.out.Len() > 0 {
		fmt.Printf("figures so far:\n%s", b.out.String())
	}
	b.srv.Fail(format, a...)
}

// printf adds a line to the report.
func (b *bench) printf(format string, a ...any) { fmt.Fprintf(&b.out, format+"\n", a...) }

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}
