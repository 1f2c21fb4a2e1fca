package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"runtime"
	"time"

	"github.com/outdial/outdial/bench/internal/realbin"
)

// create creates the big campaign while a victim dials.
func (b *bench) create() {
	var pgSize0 int64
	if b.db.Postgres() {
		pgSize0, _ = b.pgSizes()
	}
	vid := b.startVictim(b.victimCSV)
	pid := b.srv.Pid()
	rss0 := realbin.ProcStatusKB(pid, "VmRSS")
	cpu0, pg0 := realbin.ProcCPU(pid), b.db.BackendCPU()
	rs := realbin.SampleRSS(pid, 20*time.Millisecond)
	w := b.watch(vid)
	log.Printf("creating the campaign of %d rows", b.rows)
	t0 := time.Now()
	camp := b.c.Post("/api/v1/campaign", map[string]any{"name": "big", "workflow_id": b.wfBench, "source_id": b.bigSource,
		"max_concurrency": 500, "rate_limit_per_second": 1000, "retry_config": map[string]any{"enabled": false}})
	t1 := time.Now()
	took := t1.Sub(t0)
	peak := rs.End()
	cpu, pgCPU := realbin.ProcCPU(pid)-cpu0, b.db.BackendCPU().Since(pg0)
	rss1 := realbin.ProcStatusKB(pid, "VmRSS")
	b.big = id(camp)
	total := num(camp, "total_rows")

	b.printf("create: POST /api/v1/campaign of %d rows answered in %.2f s (state %v, total_rows %d: %s)  target <= %d s %s",
		b.rows, took.Seconds(), camp["state"], total, verdict(total == int64(b.rows)), targetCreateSeconds,
		verdict(took <= targetCreateSeconds*time.Second))
	growth := mb(peak - rss0)
	b.printf("  serve RSS %.1f MB before, peak %.1f MB (VmRSS every 20 ms), growth %+.1f MB, %.1f MB after; serve CPU %.2f s  target growth <= %d MB %s",
		mb(rss0), mb(peak), growth, mb(rss1), cpu.Seconds(), targetCreateRSSMB, verdict(growth <= targetCreateRSSMB))
	if b.db.Postgres() {
		b.printf("  PostgreSQL backends of this database: %.2f CPU-s during the create", pgCPU.Seconds())
	}
	b.victimLine("the create", t0, t1)
	b.endWatch(w, "the create")
	b.stopVictim(vid)
	if total != int64(b.rows) {
		b.fail("campaign has %d contacts, want %d", total, b.rows)
	}

	db, wal := b.sizes("after the create")
	if b.db.Postgres() {
		_, contacts := b.pgSizes()
		b.printf("  %.0f bytes per contact (the database's growth over the create, %.1f MB before), %.0f in the contacts table with its indexes",
			float64(db-pgSize0)/float64(b.rows), float64(pgSize0)/1e6, float64(contacts)/float64(b.rows))
		return
	}
	b.printf("  %.0f bytes per contact (database file), %.0f with the WAL (the issue measured 216 MB + a 217 MB WAL before)  WAL target <= %d MB %s",
		float64(db)/float64(b.rows), float64(db+wal)/float64(b.rows), targetWALMB, verdict(wal <= targetWALMB<<20))
}

// dial runs the big campaign for b.dialCalls calls, then pauses it.
func (b *bench) dial() {
	pid := b.srv.Pid()
	path := "/api/v1/campaign/" + itoa(b.big)
	log.Printf("dialing %d calls", b.dialCalls)
	rss0 := realbin.ProcStatusKB(pid, "VmRSS")
	cpu0, self0, busy0, pg0 := realbin.ProcCPU(pid), realbin.SelfCPU(), realbin.MachineBusy(), b.db.BackendCPU()
	b.sim.ResetPeak()
	st0 := b.sim.Stats()
	// The RSS's peak in each quarter of the calls: a garbage-collected
	// heap saws up and down (GOGC 200), so single samples say little;
	// peaks that climb from quarter to quarter mean state per call.
	var quarters [4]int64
	rs := realbin.SampleRSS(pid, 100*time.Millisecond)
	t0 := time.Now()
	b.c.Post(path+"/start", nil)
	var executed int64
	for {
		time.Sleep(100 * time.Millisecond)
		cp := b.c.Get(path)
		executed = num(cp, "executed_count")
		q := min(3, int(executed*4/int64(b.dialCalls)))
		quarters[q] = max(quarters[q], realbin.ProcStatusKB(pid, "VmRSS"))
		if executed >= int64(b.dialCalls) {
			break
		}
		if cp["state"] != "running" {
			b.fail("campaign %v after %d calls: %v", cp["state"], executed, cp)
		}
		if time.Since(t0) > 10*time.Minute {
			b.fail("only %d calls placed after 10 minutes", executed)
		}
	}
	wall := time.Since(t0)
	cpu, self, busy := realbin.ProcCPU(pid)-cpu0, realbin.SelfCPU()-self0, realbin.MachineBusy()-busy0
	pgCPU := b.db.BackendCPU().Since(pg0)
	rss1 := realbin.ProcStatusKB(pid, "VmRSS")
	peak := rs.End()
	st := b.sim.Stats()
	b.c.Post(path+"/pause", nil)
	b.waitDrained(b.big)

	rate := float64(executed) / wall.Seconds()
	per1000 := cpu.Seconds() / (float64(executed) / 1000)
	b.printf("dialing with %d contacts queued (max_concurrency 500, rate_limit_per_second 1000, talk %v, one number in ten busy): %d calls placed in %.2f s (start request to executed_count >= %d, polled every 100 ms), simulator created %d (%d 429s)",
		b.rows, b.talk, executed, wall.Seconds(), b.dialCalls, st.Created-st0.Created, st.RateLimited-st0.RateLimited)
	b.printf("  calls/s %.0f  target >= %d %s; peak calls in flight %d (simulator)  target <= 500 %s",
		rate, targetCallsPerSecond, verdict(rate >= targetCallsPerSecond), st.PeakInFlight, verdict(st.PeakInFlight <= 500))
	b.printf("  serve CPU per 1,000 calls %.3f s (%.2f CPU-s, %.2f cores busy)  target <= %.1f %s",
		per1000, cpu.Seconds(), cpu.Seconds()/wall.Seconds(), targetCPUPer1000, verdict(per1000 <= targetCPUPer1000))
	if b.db.Postgres() {
		pg := pgCPU.Seconds() / (float64(executed) / 1000)
		b.printf("  PostgreSQL backends of this database: %.3f CPU-s per 1,000 calls (%.2f CPU-s); serve + backends %.3f", pg, pgCPU.Seconds(), per1000+pg)
	}
	growth := mb(quarters[3] - quarters[1])
	b.printf("  serve RSS %.1f MB at the start (what the create left), %.1f MB at the end; its peak in each quarter of the calls %.1f, %.1f, %.1f, %.1f MB; peak %.1f MB  target flat (4th quarter's peak - 2nd's <= %d MB: %+.1f) %s, peak < %d MB %s",
		mb(rss0), mb(rss1), mb(quarters[0]), mb(quarters[1]), mb(quarters[2]), mb(quarters[3]), mb(peak),
		targetFlatMB, growth, verdict(growth <= targetFlatMB),
		targetRSSMB, verdict(mb(peak) < targetRSSMB))
	other := busy - cpu - self - pgCPU
	b.printf("  load generator (simulator + bigbench) CPU %.2f s; other processes %.2f CPU-s (%.2f cores of %d)",
		self.Seconds(), other.Seconds(), other.Seconds()/wall.Seconds(), runtime.NumCPU())
	b.sizes("after the dialing phase")
}

// paging times GET /calls at the start and near the end of each filter.
func (b *bench) paging() {
	log.Printf("paging")
	b.printf("paging: GET /campaign/{id}/calls?limit=100, median of 20 requests: the first page, and the page after an id 150 matches before the last (placed attempts for no filter)  target: deep <= 2 x first + 2 ms")
	for _, f := range []struct{ name, query, count, deep string }{
		{"no filter", "", "1 = 1", "state = 'done'"},
		{"state=done", "&state=done", "state = 'done'", "state = 'done'"},
		{"outcome=answered", "&outcome=answered", "outcome = 'answered'", "outcome = 'answered'"},
		{"state=queued", "&state=queued", "state = 'queued'", "state = 'queued'"},
	} {
		n, err := b.ro.count(`SELECT count(*) FROM call_attempts WHERE campaign_id = ? AND `+f.count, b.big)
		if err != nil {
			b.fail("count attempts: %v", err)
		}
		var after int64
		err = b.ro.queryRow(`SELECT id FROM call_attempts WHERE campaign_id = ? AND `+f.deep+` ORDER BY id DESC LIMIT 1 OFFSET 150`, b.big).Scan(&after)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			b.fail("find a deep attempt id: %v", err)
		}
		first, n1 := b.pageTime(f.query, 0)
		deep, n2 := b.pageTime(f.query, after)
		b.printf("  %-17s %8d attempts  first page %6.2f ms (%3d rows)  after_id %-8d %6.2f ms (%3d rows)  %s",
			f.name, n, ms(first), n1, after, ms(deep), n2, verdict(deep <= 2*first+2*time.Millisecond))
	}
}

// pageTime is the median time of 20 GET /calls?limit=100&after_id=after
// plus query, and the rows a page had.
func (b *bench) pageTime(query string, after int64) (time.Duration, int) {
	path := fmt.Sprintf("/api/v1/campaign/%d/calls?limit=100&after_id=%d%s", b.big, after, query)
	var ds []time.Duration
	rows := 0
	for range 20 {
		t := time.Now()
		page := b.c.Get(path)
		ds = append(ds, time.Since(t))
		calls, _ := page["calls"].([]any)
		rows = len(calls)
	}
	return median(ds), rows
}

// report streams the big campaign's report to the end.
func (b *bench) report() {
	log.Printf("report")
	pid := b.srv.Pid()
	rss0 := realbin.ProcStatusKB(pid, "VmRSS")
	rs := realbin.SampleRSS(pid, 20*time.Millisecond)
	t0 := time.Now()
	res, err := b.c.Send(context.Background(), http.MethodGet, "/api/v1/campaign/"+itoa(b.big)+"/report", nil)
	if err != nil {
		b.fail("report: %v", err)
	}
	if res.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(res.Body)
		b.fail("report: status %d: %s", res.StatusCode, msg)
	}
	r := bufio.NewReaderSize(res.Body, 256<<10)
	var lines, size int64
	buf := make([]byte, 256<<10)
	for {
		n, err := r.Read(buf)
		lines += int64(bytes.Count(buf[:n], []byte{'\n'}))
		size += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			b.fail("report after %d lines: %v", lines, err)
		}
	}
	res.Body.Close()
	took := time.Since(t0)
	peak := rs.End()
	want := int64(b.rows) + 1
	b.printf("report: GET /report streamed %d lines (%.1f MB) in %.2f s (want %d lines: %s)  target <= %d s %s",
		lines, float64(size)/1e6, took.Seconds(), want, verdict(lines == want), targetReportSeconds,
		verdict(took <= targetReportSeconds*time.Second))
	growth := mb(peak - rss0)
	b.printf("  serve RSS %.1f MB before, peak %.1f MB, growth %+.1f MB  target growth <= %d MB %s",
		mb(rss0), mb(peak), growth, targetReportRSSMB, verdict(growth <= targetReportRSSMB))
}
