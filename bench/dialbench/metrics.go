package main

import (
	"fmt"
	"log"
	"net/http"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrapeMetrics reads the service's /metrics once, after the campaign, and
// describes it: the calls counted as placed (which must be calls, the
// campaign's executed_count, or the benchmark fails) and the dispatch and
// database latencies' means.
func scrapeMetrics(addr string, calls int) string {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		log.Fatalf("scrape /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		log.Fatalf("scrape /metrics: status %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		log.Fatalf("parse /metrics: %v", err)
	}
	placed := 0.0
	if f := fams["outdial_calls_placed_total"]; f != nil {
		for _, m := range f.GetMetric() {
			placed += m.GetCounter().GetValue()
		}
	}
	if int(placed) != calls {
		log.Fatalf("/metrics: outdial_calls_placed_total %v, want executed_count %d", placed, calls)
	}
	mean := func(name string) string {
		f := fams[name]
		if f == nil || len(f.GetMetric()) == 0 || f.GetMetric()[0].GetHistogram().GetSampleCount() == 0 {
			return "-"
		}
		h := f.GetMetric()[0].GetHistogram()
		return fmt.Sprintf("%.2f ms over %d", 1000*h.GetSampleSum()/float64(h.GetSampleCount()), h.GetSampleCount())
	}
	return fmt.Sprintf("on at %s: calls placed %v; mean dispatch %s; mean db write wait %s, commit %s", addr, placed,
		mean("outdial_dispatch_seconds"), mean("outdial_db_write_wait_seconds"), mean("outdial_db_commit_seconds"))
}
