package dialer_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/dialer/metrics"
	"github.com/outdial/outdial/store"
)

// scrape fetches url (a promhttp handler) and parses the text format.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d, want %d", resp.StatusCode, http.StatusOK)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse the scrape: %v", err)
	}
	return fams
}

// value returns the sum of family name's samples whose labels include
// labels (counter, gauge or untyped value; a histogram's sample count).
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	sum := 0.0
next:
	for _, m := range f.GetMetric() {
		for k, v := range labels {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum
}

// TestMetricsOfACampaign runs a campaign with metrics on and checks the
// scraped values against what the simulator and the database say
// happened, and that no label holds anything like a phone number.
func TestMetricsOfACampaign(t *testing.T) {
	outcomes := []twiliosim.Outcome{twiliosim.Human, twiliosim.Busy, twiliosim.NoAnswer}
	m := metrics.New()
	h := newHarness(t, twiliosim.Config{Script: func(ci twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: outcomes[ci.N%3], RingDelay: 2 * time.Millisecond, TalkDuration: 5 * time.Millisecond}
	}}, withMetrics(m))
	m.WatchInFlight(h.eng.EachInFlight)
	m.WatchCampaigns(h.db.CampaignCountsByState)
	h.db.ObserveBatches(m.ObserveBatch)
	srv := httptest.NewServer(promhttp.HandlerFor(m.Registry(), promhttp.HandlerOpts{}))
	defer srv.Close()

	const n = 30
	c := h.campaign(n, store.Settings{MaxConcurrency: 5}, nil)
	h.do(c.ID, store.OpStart)
	mid := scrape(t, srv.URL)
	if _, ok := mid["outdial_calls_in_flight"]; !ok {
		t.Fatal("no outdial_calls_in_flight while the campaign runs")
	}
	h.waitState(c.ID, store.StateCompleted)

	// A forged status webhook: the attempt's token, another auth token.
	a := h.attempts(c.ID)[0]
	path := fmt.Sprintf("/api/v1/telephony/twilio/status/%d?t=%s", a.ID, url.QueryEscape(h.eng.Token(a.ID)))
	form := url.Values{"AccountSid": {h.sim.AccountSID()}, "CallSid": {deref(a.ProviderCallID)}, "CallStatus": {"completed"},
		"CallDuration": {"1"}, "SequenceNumber": {"9"}, "To": {a.PhoneNumber}, "From": {"+14155550100"}}
	if got := h.postWebhook(path, form, "not-the-auth-token"); got != http.StatusForbidden {
		t.Fatalf("forged webhook status = %d, want %d", got, http.StatusForbidden)
	}

	// The last outcome is counted just after its status is committed, so
	// the campaign may complete a moment before.
	var fams map[string]*dto.MetricFamily
	deadline := time.Now().Add(10 * time.Second)
	for {
		fams = scrape(t, srv.URL)
		if value(fams, "outdial_call_outcomes_total", nil) == n && value(fams, "outdial_calls_in_flight", nil) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("outcomes = %v, in flight = %v; want %d, 0", value(fams, "outdial_call_outcomes_total", nil),
				value(fams, "outdial_calls_in_flight", nil), n)
		}
		time.Sleep(5 * time.Millisecond)
	}

	twilio := map[string]string{"provider": "twilio"}
	created := float64(h.sim.Stats().Created)
	if got := value(fams, "outdial_calls_placed_total", twilio); got != created || created != n {
		t.Fatalf("calls placed = %v, simulator created %v, want %d", got, created, n)
	}
	if got := value(fams, "outdial_provider_requests_total", map[string]string{"provider": "twilio", "status_class": "2xx"}); got != created {
		t.Fatalf("2xx requests = %v, want %v", got, created)
	}
	if got := value(fams, "outdial_dispatch_seconds", nil); got != created {
		t.Fatalf("dispatch histogram count = %v, want %v", got, created)
	}
	want := map[string]float64{}
	for _, a := range h.attempts(c.ID) {
		want[deref(a.Outcome)]++
	}
	if len(want) != 3 {
		t.Fatalf("outcomes in the database = %v, want answered, busy and no_answer", want)
	}
	for outcome, w := range want {
		if got := value(fams, "outdial_call_outcomes_total", map[string]string{"provider": "twilio", "outcome": outcome}); got != w {
			t.Fatalf("outcome %s = %v, want %v", outcome, got, w)
		}
	}
	if got := value(fams, "outdial_webhooks_total", map[string]string{"provider": "twilio", "result": "applied"}); got < n {
		t.Fatalf("webhooks applied = %v, want at least %d", got, n)
	}
	if got := value(fams, "outdial_webhooks_total", map[string]string{"provider": "twilio", "result": "forged"}); got != 1 {
		t.Fatalf("webhooks forged = %v, want 1", got)
	}
	if got := value(fams, "outdial_campaigns", map[string]string{"state": "completed"}); got != 1 {
		t.Fatalf("completed campaigns = %v, want 1", got)
	}
	if got := value(fams, "outdial_campaigns", map[string]string{"state": "running"}); got != 0 {
		t.Fatalf("running campaigns = %v, want 0", got)
	}
	if got := value(fams, "outdial_breaker_trips_total", nil); got != 0 {
		t.Fatalf("breaker trips = %v, want 0", got)
	}
	for _, name := range []string{"outdial_db_write_wait_seconds", "outdial_db_commit_seconds"} {
		if got := value(fams, name, nil); got == 0 {
			t.Fatalf("%s has no observations", name)
		}
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "outdial_provider_rate_limited_total",
		"outdial_provider_auth_failures_total"} {
		if fams[name] == nil {
			t.Fatalf("%s missing from the scrape", name)
		}
	}
	phone := regexp.MustCompile(`\+?\d{7,}`)
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if phone.MatchString(lp.GetValue()) {
					t.Fatalf("%s{%s=%q}: a label value like a phone number", name, lp.GetName(), lp.GetValue())
				}
			}
		}
	}
}

// TestMetricsOfProviderRefusals counts a 429 and the breaker's trip, then
// a 401.
func TestMetricsOfProviderRefusals(t *testing.T) {
	m := metrics.New()
	h := newHarness(t, twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Failed}
	}}, withMetrics(m))
	srv := httptest.NewServer(promhttp.HandlerFor(m.Registry(), promhttp.HandlerOpts{}))
	defer srv.Close()
	h.sim.TooManyRequestsNext(1)
	c := h.campaign(10, store.Settings{MaxConcurrency: 1, CircuitBreaker: store.CircuitBreaker{Enabled: true,
		FailureThreshold: 0.5, WindowSeconds: 600, MinCallsInWindow: 3}}, nil)
	h.do(c.ID, store.OpStart)
	h.waitFor("a 429 logged", func() bool { return len(h.logs(c.ID, "provider_rate_limited")) > 0 })
	h.advance(2*time.Minute, c.ID) // past the provider's back-off
	h.waitState(c.ID, store.StatePaused)
	h.waitFor("the trip counted", func() bool {
		return value(scrape(t, srv.URL), "outdial_breaker_trips_total", nil) == 1
	})
	// The outcome that tripped the breaker is counted once its status is
	// applied, which may finish after the trip (a slower database).
	h.waitFor("the failed outcomes counted", func() bool {
		return value(scrape(t, srv.URL), "outdial_call_outcomes_total", map[string]string{"provider": "twilio", "outcome": "failed"}) >= 3
	})
	fams := scrape(t, srv.URL)
	twilio := map[string]string{"provider": "twilio"}
	if got := value(fams, "outdial_provider_rate_limited_total", twilio); got != 1 {
		t.Fatalf("rate limited = %v, want 1", got)
	}
	if got := value(fams, "outdial_provider_requests_total", map[string]string{"provider": "twilio", "status_class": "4xx"}); got != 1 {
		t.Fatalf("4xx requests = %v, want 1", got)
	}
	if got := value(fams, "outdial_call_outcomes_total", map[string]string{"provider": "twilio", "outcome": "failed"}); got < 3 {
		t.Fatalf("failed outcomes = %v, want at least 3", got)
	}

	h.sim.SetUnauthorized(true)
	c2 := h.campaignFrom(100, 3, store.Settings{MaxConcurrency: 1}, nil)
	h.do(c2.ID, store.OpStart)
	h.waitState(c2.ID, store.StatePaused)
	if got := value(scrape(t, srv.URL), "outdial_provider_auth_failures_total", twilio); got != 1 {
		t.Fatalf("auth failures = %v, want 1", got)
	}
}
