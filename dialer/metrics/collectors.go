package metrics

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// InFlightSource calls yield with each campaign that has attempts dialing
// or in flight, or a runner, and its count of them (the engine's
// Engine.EachInFlight). It is called at scrape time only.
type InFlightSource func(yield func(campaignID int64, n int))

// CampaignStates returns the number of campaigns by state (one GROUP BY
// query; store's DB.CampaignCountsByState). It is called at scrape time
// only.
type CampaignStates func(ctx context.Context) (map[string]int64, error)

// campaignStates are the states outdial_campaigns always reports (0 when
// none); a state the database returns beyond them is reported too.
var campaignStates = []string{"draft", "running", "paused", "completed", "cancelled", "failed"}

// scrapeTimeout bounds the database query of a scrape.
const scrapeTimeout = 5 * time.Second

var (
	inFlightDesc = prometheus.NewDesc("outdial_calls_in_flight",
		"Attempts dialing or in flight (each holds a slot of its campaign's max_concurrency), by campaign; a campaign without any and without a runner has no series.",
		[]string{"campaign_id"}, nil)
	campaignsDesc = prometheus.NewDesc("outdial_campaigns",
		"Campaigns by state (read from the database at scrape time; hidden campaigns included until purged).",
		[]string{"state"}, nil)
)

// WatchInFlight adds outdial_calls_in_flight, read from src at scrape time.
func (m *Metrics) WatchInFlight(src InFlightSource) {
	m.reg.MustRegister(inFlightCollector{src})
}

// WatchCampaigns adds outdial_campaigns, read from src at scrape time.
func (m *Metrics) WatchCampaigns(src CampaignStates) {
	m.reg.MustRegister(campaignsCollector{src})
}

type inFlightCollector struct{ src InFlightSource }

func (c inFlightCollector) Describe(ch chan<- *prometheus.Desc) { ch <- inFlightDesc }

func (c inFlightCollector) Collect(ch chan<- prometheus.Metric) {
	c.src(func(id int64, n int) {
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(n), strconv.FormatInt(id, 10))
	})
}

type campaignsCollector struct{ src CampaignStates }

func (c campaignsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- campaignsDesc }

func (c campaignsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	counts, err := c.src(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(campaignsDesc, err)
		return
	}
	for _, s := range campaignStates {
		ch <- prometheus.MustNewConstMetric(campaignsDesc, prometheus.GaugeValue, float64(counts[s]), s)
	}
	for s, n := range counts {
		if !known(s) {
			ch <- prometheus.MustNewConstMetric(campaignsDesc, prometheus.GaugeValue, float64(n), s)
		}
	}
}

func known(state string) bool {
	for _, s := range campaignStates {
		if s == state {
			return true
		}
	}
	return false
}
