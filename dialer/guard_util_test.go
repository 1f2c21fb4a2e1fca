package dialer_test

// Helpers of the guard-rail tests (guard*_test.go): seams that stop a
// dispatch between its claim and its provider request, adding suppressions
// as the endpoint does, reading an attempt's evidence.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web"
)

// buildPause stops the first dispatch that builds the campaign's carrier
// (the engine builds it once per configuration, on the first dispatch),
// after the attempt was claimed and before the guard rails are checked.
type buildPause struct {
	armed   atomic.Bool
	paused  chan struct{}
	release chan struct{}
	once    sync.Once
}

// newBuildPause returns a pause for newHarness's option.
func newBuildPause() *buildPause {
	return &buildPause{paused: make(chan struct{}, 1), release: make(chan struct{})}
}

func (p *buildPause) option() harnessOption {
	return withNewCarrier(func(provider string, creds map[string]any, opts carrier.Options) (carrier.Carrier, error) {
		if p.armed.CompareAndSwap(true, false) {
			p.paused <- struct{}{}
			<-p.release
		}
		return carrier.New(provider, creds, opts)
	})
}

// wait blocks until a dispatch is paused. The pause is released at the
// end of the test at the latest, before the harness stops its engine
// (which waits for the dispatch).
func (p *buildPause) wait(t *testing.T) {
	t.Helper()
	t.Cleanup(p.open)
	select {
	case <-p.paused:
	case <-time.After(waitTimeout):
		t.Fatal("timed out waiting for a dispatch to build its carrier")
	}
}

func (p *buildPause) open() { p.once.Do(func() { close(p.release) }) }

// holdCreates holds every create-call request (once on) until opened: the
// dispatch that sent it has checked the guard rails and holds the
// suppression gate meanwhile.
type holdCreates struct {
	next    http.RoundTripper
	on      atomic.Bool
	waiting atomic.Int32
	release chan struct{}
	once    sync.Once
}

func (hc *holdCreates) RoundTrip(r *http.Request) (*http.Response, error) {
	if hc.on.Load() && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/Calls.json") {
		hc.waiting.Add(1)
		select {
		case <-hc.release:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return hc.next.RoundTrip(r)
}

func (hc *holdCreates) open() { hc.once.Do(func() { close(hc.release) }) }

// suppress adds numbers to the organization's list as the suppressions
// endpoint does (stored, then SuppressionsAdded) and fails if
// SuppressionsAdded does not return.
func (h *harness) suppress(ns store.NewSuppressions, numbers ...string) {
	h.t.Helper()
	if _, err := h.db.AddSuppressions(context.Background(), h.org, ns, numbers); err != nil {
		h.t.Fatal(err)
	}
	h.waitReturn("SuppressionsAdded", func() { h.eng.SuppressionsAdded(context.Background(), h.org) })
}

// waitReturn runs f and fails the test if it has not returned within
// waitTimeout.
func (h *harness) waitReturn(what string, f func()) {
	h.t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		h.t.Fatalf("%s did not return", what)
	}
}

// suppressionOf returns number's entry on the organization's list.
func (h *harness) suppressionOf(number string) store.Suppression {
	h.t.Helper()
	list, err := h.db.ListSuppressions(context.Background(), h.org, number, 0, 1)
	if err != nil || len(list) != 1 {
		h.t.Fatalf("suppression of %s: %v %v", number, list, err)
	}
	return list[0]
}

// evidenceOf decodes attempt a's compliance evidence.
func evidenceOf(t *testing.T, a *store.Attempt) dialer.Evidence {
	t.Helper()
	if a.Compliance == nil {
		t.Fatalf("attempt %d (%s, %s) has no evidence", a.ID, a.PhoneNumber, a.State)
	}
	var ev dialer.Evidence
	if err := json.Unmarshal(a.Compliance, &ev); err != nil {
		t.Fatalf("attempt %d evidence %s: %v", a.ID, a.Compliance, err)
	}
	return ev
}

// checkSuppressedEvidence checks the evidence of an attempt suppressed by
// entry s.
func checkSuppressedEvidence(t *testing.T, a *store.Attempt, s store.Suppression) {
	t.Helper()
	ev := evidenceOf(t, a)
	if ev.Suppression != "suppressed" || ev.SuppressionID == nil || *ev.SuppressionID != s.ID || ev.SuppressionSource != s.Source {
		t.Fatalf("attempt %d evidence %s, want suppressed by entry %d from %s", a.ID, a.Compliance, s.ID, s.Source)
	}
	if ev.CheckedAt.IsZero() || deref(a.Outcome) != store.OutcomeSuppressed || a.ProviderCallID != nil {
		t.Fatalf("attempt %d: outcome %s, call %v, evidence %s; want suppressed, never placed, checked", a.ID, deref(a.Outcome), a.ProviderCallID, a.Compliance)
	}
}

// countingEngine replaces the harness's engine (before any campaign runs)
// by one whose clock counts its readings: every step of a runner reads it,
// so a runner that polls shows as a growing count.
func (h *harness) countingEngine() *atomic.Int64 {
	h.t.Helper()
	h.stopEngine()
	var reads atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.eng = dialer.New(dialer.Config{DB: h.db, PublicURL: h.public, TokenKey: []byte("test-token-key"),
		MaxCallSeconds: h.opts.maxCallSeconds, NewCarrier: h.opts.newCarrier,
		Carriers: carrier.Options{BaseURLs: map[string]string{h.prov.Provider(): h.prov.BaseURL()}, HTTPClient: h.opts.client},
		Now: func() time.Time {
			reads.Add(1)
			return h.clock.Now()
		}})
	var api http.Handler = web.New(web.Config{DB: h.db, Dialer: h.eng, PublicURL: h.public})
	h.handler.Store(&api)
	if err := h.eng.Start(ctx); err != nil {
		h.t.Fatal(err)
	}
	return &reads
}

// enableHours turns the organization's calling hours on: 08:00–21:00 every
// day, the defaults. It returns the policy's version.
func (h *harness) enableHours() int64 {
	h.t.Helper()
	h.setPolicy(func(p *store.Policy) { p.CallingHours = store.DefaultPolicy().CallingHours })
	p, err := h.db.CompliancePolicy(context.Background(), h.org)
	if err != nil {
		h.t.Fatal(err)
	}
	return p.Version
}

// describe lists attempts for failure messages.
func describe(list []*store.Attempt) string {
	var b strings.Builder
	for _, a := range list {
		fmt.Fprintf(&b, "[%d %s #%d %s %s due %s] ", a.ID, a.PhoneNumber, a.Attempt, a.State, deref(a.Outcome), a.DueAt.UTC().Format(time.RFC3339))
	}
	return b.String()
}
