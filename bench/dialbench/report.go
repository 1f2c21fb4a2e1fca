package main

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/outdial/outdial/bench/internal/realbin"
)

// run is what the dialing phase measured, for the report.
type run struct {
	contacts, concurrency int
	rate                  float64
	talk                  time.Duration
	db                    *realbin.Database
	cl                    *realbin.Cluster

	load0      string          // load average at the phase's start
	final      map[string]any  // the campaign once it left running
	calls      int             // its executed_count
	wall, span time.Duration   // start request to completion seen; started_at to completed_at
	cpu        time.Duration   // every node's CPU over the phase
	nodeCPU    []time.Duration // each node's
	pgCPU      time.Duration   // the database's backends' (PostgreSQL)
	pgBackends int             // backends at the phase's end
	self, busy time.Duration   // this process's CPU; the machine's busy time
	hwm        []int64         // each node's VmHWM at the end, kB
	rssPeak    []int64         // each node's VmRSS peak sampled while dialing, kB
	dialedBy   string          // the nodes the campaign's dialed_by named while polled
}

// printHeader prints the machine, the campaign and, on PostgreSQL, the
// database and the nodes.
func (r *run) printHeader() {
	fmt.Printf("machine: %d CPUs (GOMAXPROCS of this process %d), %s, %s/%s; load average before %s, after %s\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH, r.load0, realbin.LoadAvg())
	fmt.Printf("campaign: %d contacts, max_concurrency %d, rate_limit_per_second %g, talk %v\n", r.contacts, r.concurrency, r.rate, r.talk)
	if !r.db.Postgres() {
		return
	}
	fmt.Printf("database: PostgreSQL %s; %d serve nodes (%s); S3 store versitygw at %s\n",
		realbin.RedactURL(r.db.URL), len(r.cl.Nodes), strings.Join(r.cl.Names, ", "), r.db.S3.Addr)
	if r.cl.Proxy != nil {
		fmt.Printf("proxy: %s (the nodes' --public-url and the API base)\n", r.cl.Proxy)
	}
	fmt.Printf("campaign dialed by: %s (its dialed_by, polled every 100 ms from the start request)\n", r.dialedBy)
}

// printFigures prints the measures against issue 5's targets.
func (r *run) printFigures(peakInFlight int) {
	calls := float64(r.calls)
	rateWall := calls / r.wall.Seconds()
	rateSpan := calls / r.span.Seconds()
	cpuPer1000 := r.cpu.Seconds() / (calls / 1000)
	var peak int64
	for i := range r.hwm {
		peak = max(peak, r.hwm[i], r.rssPeak[i])
	}
	rssMB := float64(peak) / 1024
	fmt.Printf("completed calls/s:           %7.0f  (start request to completion seen by polling every 100 ms: %.2f s)  target >= %d %s\n",
		rateWall, r.wall.Seconds(), targetCallsPerSecond, verdict(rateWall >= targetCallsPerSecond))
	fmt.Printf("completed calls/s (service): %7.0f  (campaign started_at to completed_at: %.3f s)\n", rateSpan, r.span.Seconds())
	fmt.Printf("peak calls in flight:        %7d  (simulator)  target <= %d %s\n", peakInFlight, r.concurrency, verdict(peakInFlight <= r.concurrency))
	fmt.Printf("service CPU per 1,000 calls: %7.3f s (%.2f CPU-s over the dialing phase, %.2f cores busy)  target <= %.1f %s\n",
		cpuPer1000, r.cpu.Seconds(), r.cpu.Seconds()/r.wall.Seconds(), targetCPUPer1000, verdict(cpuPer1000 <= targetCPUPer1000))
	if len(r.nodeCPU) > 1 {
		parts := make([]string, len(r.nodeCPU))
		for i, d := range r.nodeCPU {
			parts[i] = fmt.Sprintf("%s %.3f", r.cl.Names[i], d.Seconds()/(calls/1000))
		}
		fmt.Printf("  summed over %d nodes; per node, s per 1,000 calls: %s\n", len(r.nodeCPU), strings.Join(parts, ", "))
	}
	if r.db.Postgres() {
		if r.pgBackends == 0 {
			fmt.Printf("PostgreSQL backends' CPU:    not read (the server's processes are not on this machine or not readable)\n")
		} else {
			pg := r.pgCPU.Seconds() / (calls / 1000)
			fmt.Printf("PostgreSQL backends' CPU:    %7.3f s per 1,000 calls (%.2f CPU-s, %d backends of this database; the server's shared processes not counted); service + backends %.3f s\n",
				pg, r.pgCPU.Seconds(), r.pgBackends, cpuPer1000+pg)
		}
	}
	fmt.Printf("service peak RSS:            %7.1f MB (VmHWM, whole run; VmRSS peak sampled while dialing %s)  target < %d %s\n",
		rssMB, r.cl.PerNodeMB(r.rssPeak), targetRSSMB, verdict(rssMB < targetRSSMB))
	if len(r.hwm) > 1 {
		fmt.Printf("  peak RSS per node (VmHWM): %s\n", r.cl.PerNodeMB(r.hwm))
	}
	gen := "simulator + this program"
	if r.cl.Proxy != nil {
		gen = "simulator + proxy + this program"
	}
	fmt.Printf("load generator (%s) CPU: %.2f s (%.3f s per 1,000 calls)\n", gen, r.self.Seconds(), r.self.Seconds()/(calls/1000))
	other := r.busy - r.cpu - r.self - r.pgCPU
	fmt.Printf("other processes on the machine: %.2f CPU-s during the dialing phase (%.2f cores; the machine has %d)\n",
		other.Seconds(), other.Seconds()/r.wall.Seconds(), runtime.NumCPU())
}
