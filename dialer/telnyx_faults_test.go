package dialer_test

// Telnyx campaigns under faults: forged, replayed and unsigned events, rate
// limiting and refused credentials (see telnyx_campaign_test.go).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/telnyxsim"
	"github.com/outdial/outdial/store"
)

// telnyxEventBody is an event of a call as Telnyx posts it; id makes the
// body (and so its signature) unique.
func telnyxEventBody(id, eventType, callControlID, cause string) []byte {
	b, _ := json.Marshal(map[string]any{"data": map[string]any{"record_type": "event", "event_type": eventType,
		"id": id, "occurred_at": time.Now().UTC().Format(time.RFC3339Nano),
		"payload": map[string]any{"call_control_id": callControlID, "hangup_cause": cause, "hangup_source": "callee",
			"start_time": time.Now().Add(-12 * time.Second).UTC().Format(time.RFC3339Nano), "end_time": time.Now().UTC().Format(time.RFC3339Nano)}}})
	return b
}

// TestTelnyxForgedAndReplayedEvents posts events a forger could make to the
// real router: each is 403 and leaves the attempts, counters and log as they
// were; a genuine one made the same way is applied.
func TestTelnyxForgedAndReplayedEvents(t *testing.T) {
	h, sim := newTelnyxHarness(t, telnyxsim.Config{RecordEvents: true, Script: func(telnyxsim.CallInfo) telnyxsim.Script {
		return telnyxsim.Script{RingDelay: telnyxsim.Never}
	}}, true, false)
	c := h.campaign(2, store.Settings{}, nil)
	h.do(c.ID, store.OpStart)
	simWait(t, sim, "two call.initiated delivered", func(s telnyxsim.Stats) bool { return s.Events >= 2 })
	simPoll(t, sim, "both calls in flight", func() bool { return h.countAttempts(c.ID, store.AttemptInFlight) == 2 })
	before, campaignBefore, logsBefore := h.attempts(c.ID), h.get(c.ID), len(h.logs(c.ID, ""))
	a1, a2 := before[0], before[1]
	statusURL := func(id int64, token string) string {
		return fmt.Sprintf("%s/api/v1/telephony/telnyx/status/%d?t=%s", h.public, id, url.QueryEscape(token))
	}
	rec := telnyxCallTo(t, sim, a1.PhoneNumber)
	if len(rec.Events) == 0 || rec.Events[0].Status != http.StatusNoContent {
		t.Fatalf("call.initiated of %s: %+v", a1.PhoneNumber, rec.Events)
	}
	initiated := rec.Events[0]
	// Every event below has its own body: Telnyx signs the body, not the
	// URL, so one signed body sent to two URLs is one request sent twice.
	hangup := func(id string) []byte {
		return telnyxEventBody(id, "call.hangup", deref(a1.ProviderCallID), "normal_clearing")
	}
	genuine := sim.SignedEvent(statusURL(a1.ID, h.eng.Token(a1.ID)), hangup("genuine"))
	unsigned := genuine
	unsigned.Signature, unsigned.Timestamp = "", ""
	stale := genuine
	stale.Timestamp = fmt.Sprint(time.Now().Add(-10 * time.Minute).Unix())
	forgeries := []struct {
		name string
		ev   telnyxsim.Event
	}{
		{"signed with another key", telnyxsim.Forged(genuine)},
		{"no signature", unsigned},
		{"timestamp changed", stale},
		{"bad token", sim.SignedEvent(statusURL(a1.ID, "forged-token"), hangup("f1"))},
		{"another attempt's token", sim.SignedEvent(statusURL(a1.ID, h.eng.Token(a2.ID)), hangup("f2"))},
		{"another attempt's call", sim.SignedEvent(statusURL(a2.ID, h.eng.Token(a2.ID)), hangup("f3"))},
		{"another provider", sim.SignedEvent(strings.Replace(statusURL(a1.ID, h.eng.Token(a1.ID)), "/telnyx/", "/vonage/", 1), hangup("f4"))},
	}
	for _, f := range forgeries {
		status, err := sim.Deliver(context.Background(), f.ev)
		if err != nil || status != http.StatusForbidden {
			t.Errorf("%s: status %d (%v), want 403", f.name, status, err)
		}
	}
	// A replay of a delivered event is a harmless no-op (issue 15 item 7).
	if status, err := sim.Deliver(context.Background(), initiated); err != nil || status != http.StatusNoContent {
		t.Errorf("replay of a delivered event: status %d (%v), want 204", status, err)
	}
	if after := h.attempts(c.ID); !reflect.DeepEqual(after, before) {
		t.Fatal("forged events changed the attempts")
	}
	after := h.get(c.ID)
	if after.State != campaignBefore.State || after.ProcessedRows != campaignBefore.ProcessedRows || after.ExecutedCount != campaignBefore.ExecutedCount {
		t.Fatalf("forged events changed the campaign: %+v, was %+v", after, campaignBefore)
	}
	if n := len(h.logs(c.ID, "")); n != logsBefore {
		t.Fatalf("forged events logged %d entries", n-logsBefore)
	}

	// The genuine event is applied once; sent again it is a no-op.
	if status, _ := sim.Deliver(context.Background(), genuine); status != http.StatusNoContent {
		t.Fatalf("genuine event: status %d, want 204", status)
	}
	once := h.attempts(c.ID)
	if status, _ := sim.Deliver(context.Background(), genuine); status != http.StatusNoContent {
		t.Fatalf("genuine event replayed: status %d, want 204 (a no-op)", status)
	}
	if after := h.attempts(c.ID); !reflect.DeepEqual(after, once) {
		t.Fatal("a replayed event changed the attempts")
	}
	// The other call is hung up as an operator would: it ends canceled.
	car, err := carrier.New(carrier.Telnyx, sim.Credentials("", true, false), carrier.Options{BaseURLs: map[string]string{carrier.Telnyx: sim.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := car.HangUp(context.Background(), deref(a2.ProviderCallID)); err != nil {
		t.Fatal(err)
	}
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 2, 1, 2, 2)
	outcomes := map[string]string{}
	for _, a := range h.attempts(c.ID) {
		outcomes[a.PhoneNumber] = deref(a.Outcome)
	}
	if outcomes[a1.PhoneNumber] != "answered" || outcomes[a2.PhoneNumber] != "canceled" {
		t.Fatalf("outcomes %v, want %s answered (genuine event) and %s canceled", outcomes, a1.PhoneNumber, a2.PhoneNumber)
	}
}

// TestTelnyxUnsignedConfiguration: without webhook_public_key the
// per-attempt token alone authenticates an event.
func TestTelnyxUnsignedConfiguration(t *testing.T) {
	h, sim := newTelnyxHarness(t, telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
		return telnyxsim.Script{RingDelay: telnyxsim.Never}
	}}, false, false)
	c := h.campaign(1, store.Settings{}, nil)
	h.do(c.ID, store.OpStart)
	simPoll(t, sim, "the call in flight", func() bool { return h.countAttempts(c.ID, store.AttemptInFlight) == 1 })
	a := h.attempts(c.ID)[0]
	body := telnyxEventBody("e1", "call.hangup", deref(a.ProviderCallID), "user_busy")
	post := func(token string) int {
		u := fmt.Sprintf("%s/api/v1/telephony/telnyx/status/%d?t=%s", h.public, a.ID, url.QueryEscape(token))
		resp, err := http.Post(u, "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post("forged-token"); got != http.StatusForbidden {
		t.Fatalf("unsigned event with a bad token: %d, want 403", got)
	}
	if got := post(h.eng.Token(a.ID)); got != http.StatusNoContent {
		t.Fatalf("unsigned event with the token: %d, want 204", got)
	}
	h.waitState(c.ID, store.StateCompleted)
	if got := deref(h.attempts(c.ID)[0].Outcome); got != "busy" {
		t.Fatalf("outcome %s, want busy", got)
	}
}

// TestTelnyxRateLimited: HTTP 429 with error 90103 slows dialing down and
// the attempt is dialled again later; it is never the contact's failure.
func TestTelnyxRateLimited(t *testing.T) {
	h, sim := newTelnyxHarness(t, telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
		return telnyxsim.Script{TalkDuration: telnyxsim.Never, SpeakDuration: time.Millisecond}
	}}, true, false)
	sim.TooManyDialsNext(5)
	c := h.campaign(10, store.Settings{MaxConcurrency: 3}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	h.runThroughRateLimits(func() int { return sim.Stats().RateLimited }, c.ID)
	if st := sim.Stats(); st.RateLimited != 5 || st.DialRequests != 15 {
		t.Fatalf("429s %d of %d dials, want 5 of 15", st.RateLimited, st.DialRequests)
	}
	telnyxCalledOnce(t, sim, 10)
	h.checkRateLimitedCampaign(c.ID, 10)
}

// TestTelnyxAuthFailure: a 401 pauses the campaign with
// provider_auth_failed; resuming once the key works again calls everyone
// else once.
func TestTelnyxAuthFailure(t *testing.T) {
	h, sim := newTelnyxHarness(t, telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
		return telnyxsim.Script{TalkDuration: 20 * time.Millisecond, SpeakDuration: telnyxsim.Never}
	}}, true, false)
	c := h.campaign(12, store.Settings{MaxConcurrency: 3}, nil)
	h.do(c.ID, store.OpStart)
	simWait(t, sim, "some calls dialled", func(s telnyxsim.Stats) bool { return s.Dialled >= 3 })
	sim.SetUnauthorized(true)
	h.waitState(c.ID, store.StatePaused)
	logs := h.logs(c.ID, "provider_auth_failed")
	if len(logs) != 1 {
		t.Fatalf("provider_auth_failed logs %v, want one", logs)
	}
	simPoll(t, sim, "calls in flight finished", func() bool {
		return h.countAttempts(c.ID, store.AttemptInFlight)+h.countAttempts(c.ID, store.AttemptDialing) == 0
	})
	sim.SetUnauthorized(false)
	h.do(c.ID, store.OpResume)
	done := h.waitState(c.ID, store.StateCompleted)
	telnyxCalledOnce(t, sim, 12)
	checkCounters(t, done, 12, 0, 12, 12)
}
