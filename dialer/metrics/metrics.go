// Package metrics holds the service's Prometheus metrics (API.md 13): a
// dedicated registry (never the global one) with the dialer's counters and
// histograms, collectors that read the engine's and the database's state at
// scrape time, and the Go runtime and process collectors. The dialer and
// cmd record into it; nothing here imports them.
//
// Every method is safe on a nil *Metrics and then does nothing, so an
// engine built without metrics pays one nil check per fact. Label values
// are bounded: provider names from carrier's list (anything else is
// "other"), outcome and result names from fixed sets, campaign ids only for
// campaigns with calls in flight or a runner. No label ever holds a phone
// number, a name or a secret.
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Webhook results (outdial_webhooks_total's result label).
const (
	WebhookApplied   = "applied"   // verified and applied
	WebhookDuplicate = "duplicate" // verified; the attempt already had it (ignored)
	WebhookForged    = "forged"    // bad token, signature or call id: refused (403)
	WebhookBad       = "bad"       // verified but unreadable (400)
	WebhookError     = "error"     // our failure (database) while handling it
	// WebhookCanceled: the provider went away before it was handled (its
	// request's context was cancelled; answered 499 in the request log).
	// Not our failure: the provider sends it again or the attempt is
	// reconciled.
	WebhookCanceled = "canceled"
)

// Provider request status classes (outdial_provider_requests_total).
const (
	Class2xx   = "2xx"
	Class4xx   = "4xx"
	Class5xx   = "5xx"
	ClassError = "error" // no HTTP answer: connection, timeout, unreadable
)

// providers are the provider label values; any other name is "other".
var providers = []string{"ari", "cloudonix", "plivo", "telnyx", "twilio", "vobiz", "vonage"}

// outcomes are the outcome label values pre-resolved per provider; any
// other is "other".
var outcomes = []string{"answered", "voicemail", "busy", "no_answer", "failed", "canceled", "unknown", "suppressed"}

var (
	webhookResults = []string{WebhookApplied, WebhookDuplicate, WebhookForged, WebhookBad, WebhookError, WebhookCanceled}
	classes        = []string{Class2xx, Class4xx, Class5xx, ClassError}
)

// Metrics is the registry and the instruments the service records into.
// Build it with New.
type Metrics struct {
	reg *prometheus.Registry

	placed      *prometheus.CounterVec
	outcomes    *prometheus.CounterVec
	dispatch    prometheus.Histogram
	requests    *prometheus.CounterVec
	rateLimited *prometheus.CounterVec
	authFailed  *prometheus.CounterVec
	webhooks    *prometheus.CounterVec
	trips       prometheus.Counter
	writeWait   prometheus.Histogram
	commit      prometheus.Histogram
	abandoned   *prometheus.CounterVec
	firstAudio  prometheus.Histogram

	// byProvider holds each provider's label children, resolved once.
	byProvider map[string]*Provider
	mu         sync.Mutex
	other      *Provider // built on first use
}

// Provider is one provider's pre-resolved counters: recording into it
// does no label lookup and no allocation.
type Provider struct {
	placed, rateLimited, authFailed prometheus.Counter
	abandoned                       prometheus.Counter
	outcomes                        map[string]prometheus.Counter
	outcomeOther                    prometheus.Counter
	requests                        [4]prometheus.Counter // by classes' order
	webhooks                        map[string]prometheus.Counter
}

// New returns metrics registered in a new registry together with the Go
// runtime and process collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), byProvider: map[string]*Provider{}}
	m.placed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "outdial_calls_placed_total",
		Help: "Calls the provider accepted (a 2xx answer to the place request), by provider.",
	}, []string{"provider"})
	m.outcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "outdial_call_outcomes_total",
		Help: "Attempts that ended, by provider and final outcome (suppressed: not called; failed includes calls the provider refused).",
	}, []string{"provider", "outcome"})
	m.dispatch = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "outdial_dispatch_seconds",
		Help:    "Time from an attempt's claim to the provider's answer to its place request (every request sent, whatever the answer).",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15, 30},
	})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "outdial_provider_requests_total",
		Help: "Place-call requests sent to providers, by provider and answer class (2xx, 4xx, 5xx, or error when no HTTP answer was read).",
	}, []string{"provider", "status_class"})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "outdial_provider_rate_limited_total",
		Help: "Place-call requests the provider answered with its rate limit (HTTP 429 or its rate-limit code), by provider.",
	}, []string{"provider"})
	m.authFailed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "outdial_provider_auth_failures_total",
		Help: "Place-call requests the provider refused for the credentials (HTTP 401/403), by provider; each pauses its campaign.",
	}, []string{"provider"})
	m.webhooks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "outdial_webhooks_total",
		Help: "Provider webhooks (status and answer) received, by provider and result (applied, duplicate, forged, bad, error, or canceled when the provider went away before it was handled).",
	}, []string{"provider", "result"})
	m.trips = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "outdial_breaker_trips_total",
		Help: "Times a campaign's circuit breaker paused it.",
	})
	dbBuckets := []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
	m.writeWait = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "outdial_db_write_wait_seconds",
		Help:    "Time the oldest write of a group commit waited in the queue before its transaction began.",
		Buckets: dbBuckets,
	})
	m.commit = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "outdial_db_commit_seconds",
		Help:    "Time a group commit's transaction took, from its begin to its commit (with the sync of a durable one).",
		Buckets: dbBuckets,
	})
	m.abandoned = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "outdial_calls_abandoned_total",
		Help: "Calls answered by a person that were abandoned (no first audio from the agent within abandon_after_ms, or the agent failed first), by provider.",
	}, []string{"provider"})
	m.firstAudio = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "outdial_answer_to_first_audio_seconds",
		Help:    "Time from a person's answer to the agent's first audio (first_audio's arrival, a late one included; 0 for the built-in greeting).",
		Buckets: []float64{.1, .25, .5, .75, 1, 1.5, 2, 3, 5, 10, 30},
	})
	m.reg.MustRegister(m.placed, m.outcomes, m.dispatch, m.requests, m.rateLimited, m.authFailed,
		m.webhooks, m.trips, m.writeWait, m.commit, m.abandoned, m.firstAudio,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, p := range providers {
		m.byProvider[p] = m.newProvider(p)
	}
	return m
}

func (m *Metrics) newProvider(name string) *Provider {
	p := &Provider{
		placed:       m.placed.WithLabelValues(name),
		rateLimited:  m.rateLimited.WithLabelValues(name),
		authFailed:   m.authFailed.WithLabelValues(name),
		abandoned:    m.abandoned.WithLabelValues(name),
		outcomes:     map[string]prometheus.Counter{},
		outcomeOther: m.outcomes.WithLabelValues(name, "other"),
		webhooks:     map[string]prometheus.Counter{},
	}
	for _, o := range outcomes {
		p.outcomes[o] = m.outcomes.WithLabelValues(name, o)
	}
	for i, c := range classes {
		p.requests[i] = m.requests.WithLabelValues(name, c)
	}
	for _, r := range webhookResults {
		p.webhooks[r] = m.webhooks.WithLabelValues(name, r)
	}
	return p
}

// Registry is the registry to serve (promhttp.HandlerFor) and to add
// scrape-time collectors to.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Provider returns provider name's counters; a name not in carrier's list
// shares "other". Nil when m is nil.
func (m *Metrics) Provider(name string) *Provider {
	if m == nil {
		return nil
	}
	if p := m.byProvider[name]; p != nil {
		return p
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.other == nil {
		m.other = m.newProvider("other")
	}
	return m.other
}

// Placed counts a call the provider accepted.
func (p *Provider) Placed() {
	if p != nil {
		p.placed.Inc()
	}
}

// Outcome counts an attempt that ended with outcome.
func (p *Provider) Outcome(outcome string) {
	if p == nil {
		return
	}
	if c := p.outcomes[outcome]; c != nil {
		c.Inc()
		return
	}
	p.outcomeOther.Inc()
}

// Abandoned counts a call a person answered that was abandoned.
func (p *Provider) Abandoned() {
	if p != nil {
		p.abandoned.Inc()
	}
}

// Request counts a place request answered with class (Class2xx, ...).
func (p *Provider) Request(class string) {
	if p == nil {
		return
	}
	for i, c := range classes {
		if c == class {
			p.requests[i].Inc()
			return
		}
	}
}

// RateLimited counts a place request refused by the provider's rate limit.
func (p *Provider) RateLimited() {
	if p != nil {
		p.rateLimited.Inc()
	}
}

// AuthFailed counts a place request refused for the credentials.
func (p *Provider) AuthFailed() {
	if p != nil {
		p.authFailed.Inc()
	}
}

// Webhook counts a webhook handled with result (WebhookApplied, ...).
func (p *Provider) Webhook(result string) {
	if p == nil {
		return
	}
	if c := p.webhooks[result]; c != nil {
		c.Inc()
	}
}

// Dispatched records the time from a claim to the provider's answer.
func (m *Metrics) Dispatched(d time.Duration) {
	if m != nil {
		m.dispatch.Observe(d.Seconds())
	}
}

// AnswerToFirstAudio records the time from a person's answer to the
// agent's first audio.
func (m *Metrics) AnswerToFirstAudio(d time.Duration) {
	if m != nil {
		m.firstAudio.Observe(d.Seconds())
	}
}

// BreakerTripped counts a circuit breaker pausing its campaign.
func (m *Metrics) BreakerTripped() {
	if m != nil {
		m.trips.Inc()
	}
}

// ObserveBatch records one group commit of the database (store's
// DB.ObserveBatches hook): how long its oldest write waited and how long
// its transaction took. ops is not recorded.
func (m *Metrics) ObserveBatch(wait, commit time.Duration, ops int) {
	if m != nil {
		m.writeWait.Observe(wait.Seconds())
		m.commit.Observe(commit.Seconds())
	}
}
