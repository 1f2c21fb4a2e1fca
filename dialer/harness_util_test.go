package dialer_test

// Helpers shared by the engine tests: polling with deadlines (never timing
// assertions), reading attempts, contacts and logs, moving the injected
// clock, changing settings as PATCH does, and driving the simulator.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/dialer/phone"
	"github.com/outdial/outdial/store"
)

// waitTimeout bounds every wait of a test; a healthy test waits far less.
const waitTimeout = 15 * time.Second

// number is the phone number the harness gives contact i (0-based).
func number(i int) string { return fmt.Sprintf("+1415555%04d", i) }

// waitFor polls cond every few milliseconds until it holds, failing the test
// after waitTimeout with what it waited for.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s (%s)", what, h.simStats())
		}
		time.Sleep(3 * time.Millisecond)
	}
}

// simStats describes the Twilio simulator's counters, when the harness has
// one.
func (h *harness) simStats() string {
	if h.sim == nil {
		return h.prov.Provider() + " simulator"
	}
	return fmt.Sprintf("sim stats %+v", h.sim.Stats())
}

// waitSim blocks until cond holds for the simulator's counters.
func (h *harness) waitSim(what string, cond func(twiliosim.Stats) bool) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := h.sim.Wait(ctx, cond); err != nil {
		h.t.Fatalf("timed out waiting for %s (sim stats %+v)", what, h.sim.Stats())
	}
}

// steady checks, for a short while, that cond keeps holding: the only way
// to see that something does not happen. It is used after the engine was
// woken, to catch a call that should not start.
func (h *harness) steady(what string, cond func() bool) {
	h.t.Helper()
	for i := 0; i < 20; i++ {
		if !cond() {
			h.t.Fatalf("%s no longer holds (%s)", what, h.simStats())
		}
		time.Sleep(3 * time.Millisecond)
	}
}

// get returns campaign id as stored now.
func (h *harness) get(id int64) *store.Campaign {
	h.t.Helper()
	c, err := h.db.GetCampaign(context.Background(), h.org, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// attempts returns every attempt of campaign id in id order.
func (h *harness) attempts(id int64) []*store.Attempt {
	h.t.Helper()
	list, err := h.db.ListAttempts(context.Background(), id, store.AttemptFilter{Limit: 10000})
	if err != nil {
		h.t.Fatal(err)
	}
	return list
}

// countAttempts returns how many attempts of campaign id are in state.
func (h *harness) countAttempts(id int64, state string) int {
	h.t.Helper()
	n := 0
	for _, a := range h.attempts(id) {
		if a.State == state {
			n++
		}
	}
	return n
}

// contacts returns campaign id's contacts in row order.
func (h *harness) contacts(id int64) []*store.Contact {
	h.t.Helper()
	list, err := h.db.ListContacts(context.Background(), id, 0, 10000)
	if err != nil {
		h.t.Fatal(err)
	}
	return list
}

// logs returns campaign id's log entries of event ("" = all), oldest first.
func (h *harness) logs(id int64, event string) []store.LogEntry {
	h.t.Helper()
	all, err := h.db.ListLogs(context.Background(), id, time.Time{}, 1000)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []store.LogEntry
	for _, e := range all {
		if event == "" || e.Event == event {
			out = append(out, e)
		}
	}
	return out
}

// events returns the events of campaign id's log, oldest first.
func (h *harness) events(id int64) []string {
	var out []string
	for _, e := range h.logs(id, "") {
		out = append(out, e.Event)
	}
	return out
}

// advance moves the injected clock forward by d and wakes the campaigns.
func (h *harness) advance(d time.Duration, ids ...int64) {
	h.clock.Set(h.clock.Now().Add(d))
	for _, id := range ids {
		h.eng.Wake(id)
	}
}

// patch changes campaign id's settings as PATCH does: stored, then the
// engine woken.
func (h *harness) patch(id int64, change func(*store.Settings)) {
	h.t.Helper()
	if _, err := h.db.UpdateCampaignSettings(context.Background(), h.org, id, func(s *store.Settings) error {
		change(s)
		return nil
	}); err != nil {
		h.t.Fatal(err)
	}
	h.eng.Wake(id)
}

// hangUp hangs call sid up through the simulator's REST API, as an operator
// would (an unanswered call ends canceled, an answered one completed).
func (h *harness) hangUp(sid string) {
	h.t.Helper()
	c, err := carrier.New(carrier.Twilio, h.sim.Credentials(false), carrier.Options{BaseURLs: map[string]string{carrier.Twilio: h.sim.URL()}})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := c.HangUp(context.Background(), sid); err != nil {
		h.t.Fatal(err)
	}
}

// callsTo returns the simulator's calls to number to, in creation order.
func (h *harness) callsTo(to string) []twiliosim.CallRecord {
	var out []twiliosim.CallRecord
	for _, c := range h.sim.Calls() {
		if c.To == to {
			out = append(out, c)
		}
	}
	return out
}

// postWebhook posts form to the service at path (with its query) signed
// with X-Twilio-Signature over the public URL with authToken ("" = no
// signature header) and returns the HTTP status.
func (h *harness) postWebhook(path string, form url.Values, authToken string) int {
	h.t.Helper()
	u := h.public + path
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if authToken != "" {
		req.Header.Set("X-Twilio-Signature", twiliosim.Signature(authToken, u, form))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// checkCounters compares a campaign's counters with the wanted ones.
func checkCounters(t *testing.T, c *store.Campaign, processed, failed, executed, queued int64) {
	t.Helper()
	if c.ProcessedRows != processed || c.FailedRows != failed || c.ExecutedCount != executed || c.TotalQueuedCount != queued {
		t.Fatalf("counters: processed %d failed %d executed %d queued %d; want %d %d %d %d",
			c.ProcessedRows, c.FailedRows, c.ExecutedCount, c.TotalQueuedCount, processed, failed, executed, queued)
	}
}

// checkCalledOnce fails unless each of the first n numbers was called
// exactly once and no other number was called.
func (h *harness) checkCalledOnce(n int) {
	h.t.Helper()
	calledOnce(h.t, h.sim.CreatesByTo(), n, e164)
}

// statsSim is a provider simulator with counters of type S, as every
// simulator package has (Stats, and Wait blocking on a condition).
type statsSim[S any] interface {
	Wait(ctx context.Context, cond func(S) bool) error
	Stats() S
}

// simWait blocks until cond holds for sim's counters, failing the test
// after waitTimeout with them.
func simWait[S any](t *testing.T, sim statsSim[S], what string, cond func(S) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := sim.Wait(ctx, cond); err != nil {
		t.Fatalf("timed out waiting for %s (sim stats %+v)", what, sim.Stats())
	}
}

// simPoll polls cond every few milliseconds until it holds, failing the
// test after waitTimeout with sim's counters.
func simPoll[S any](t *testing.T, sim statsSim[S], what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (sim stats %+v)", what, sim.Stats())
		}
		time.Sleep(3 * time.Millisecond)
	}
}

// calledOnce fails unless each of the first n contacts' numbers was called
// exactly once and no other number was; byTo counts a simulator's creates
// per number as the provider got it (as, applied to number(i)).
func calledOnce(t *testing.T, byTo map[string]int, n int, as func(string) string) {
	t.Helper()
	if len(byTo) != n {
		t.Fatalf("%d numbers called, want %d", len(byTo), n)
	}
	for i := 0; i < n; i++ {
		if got := byTo[as(number(i))]; got != 1 {
			t.Fatalf("%s called %d times, want 1", number(i), got)
		}
	}
}

// noPlus is a number as Plivo, Vobiz and Vonage get it: without "+".
func noPlus(n string) string { return strings.TrimPrefix(n, "+") }

// e164 is a number as the other providers get it.
func e164(n string) string { return n }

// setPolicy changes the organization's compliance policy and tells the
// engine, as the policy endpoint does.
func (h *harness) setPolicy(change func(p *store.Policy)) {
	h.t.Helper()
	if _, err := h.db.UpdateCompliancePolicy(context.Background(), h.org, 0, func(p *store.Policy) error {
		change(p)
		return nil
	}); err != nil {
		h.t.Fatal(err)
	}
	if h.eng != nil {
		h.eng.PolicyChanged(h.org)
	}
}

// campaignOf creates a draft campaign calling numbers (E.164) with
// settings s, each contact with the time zones the numbering plan gives for
// its number, as the campaign endpoint stores them (calling hours need
// them), and the timezone column tz(i) (nil: none).
func (h *harness) campaignOf(numbers []string, s store.Settings, tz func(i int) string) *store.Campaign {
	h.t.Helper()
	if s.Name == "" {
		s.Name = "c"
	}
	if s.MaxConcurrency == 0 {
		s.MaxConcurrency = 10
	}
	if s.RateLimitPerSecond == 0 {
		s.RateLimitPerSecond = 1000
	}
	c, err := h.db.CreateCampaign(context.Background(), h.org, store.NewCampaign{Settings: s, WorkflowID: h.wfID,
		WorkflowName: "greeting", WorkflowDefinition: []byte(greetingWorkflow), TelephonyConfigurationID: h.cfgID, SourceID: "test"},
		func(add func(store.ContactInput) error) ([]string, error) {
			for i, n := range numbers {
				in := store.ContactInput{Row: i + 2, PhoneNumber: n, Zones: phone.Zones(n),
					Context: map[string]string{"first_name": fmt.Sprintf("P%d", i)}}
				if tz != nil {
					in.Timezone = tz(i)
				}
				if err := add(in); err != nil {
					return nil, err
				}
			}
			return []string{"phone_number", "first_name"}, nil
		})
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}
