package main

import (
	"fmt"
	"log"
	"net/http"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrapeMetrics reads every node's /metrics once, after the campaign (addrs
// and names in the nodes' order; a name is "" on SQLite's one node), and
// describes them: the calls counted as placed, which summed over the nodes
// must be calls, the campaign's executed_count, or the benchmark fails;
// with several nodes each node's count; and the dispatch and database
// latencies' means over all nodes.
func scrapeMetrics(addrs, names []string, calls int) string {
	total := 0.0
	var perNode []string
	hists := map[string]*[2]float64{} // name: sum, count
	for i, addr := range addrs {
		fams := scrape(addr)
		placed := 0.0
		if f := fams["outdial_calls_placed_total"]; f != nil {
			for _, m := range f.GetMetric() {
				placed += m.GetCounter().GetValue()
			}
		}
		total += placed
		perNode = append(perNode, fmt.Sprintf("%s %v", names[i], placed))
		for _, name := range []string{"outdial_dispatch_seconds", "outdial_db_write_wait_seconds", "outdial_db_commit_seconds"} {
			f := fams[name]
			if f == nil || len(f.GetMetric()) == 0 {
				continue
			}
			h := f.GetMetric()[0].GetHistogram()
			if hists[name] == nil {
				hists[name] = &[2]float64{}
			}
			hists[name][0] += h.GetSampleSum()
			hists[name][1] += float64(h.GetSampleCount())
		}
	}
	if int(total) != calls {
		log.Fatalf("/metrics: outdial_calls_placed_total %v (%s), want executed_count %d", total, strings.Join(perNode, ", "), calls)
	}
	mean := func(name string) string {
		h := hists[name]
		if h == nil || h[1] == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f ms over %.0f", 1000*h[0]/h[1], h[1])
	}
	where := "at " + addrs[0]
	if len(addrs) > 1 {
		where = fmt.Sprintf("on %d nodes (placed per node: %s)", len(addrs), strings.Join(perNode, ", "))
	}
	return fmt.Sprintf("on %s: calls placed %v; mean dispatch %s; mean db write wait %s, commit %s", where, total,
		mean("outdial_dispatch_seconds"), mean("outdial_db_write_wait_seconds"), mean("outdial_db_commit_seconds"))
}

// scrape reads and parses the /metrics of the metrics listener at addr.
func scrape(addr string) map[string]*dto.MetricFamily {
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
	return fams
}
