package dialer_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/outdial/outdial/dialer/carrier/plivosim"
	"github.com/outdial/outdial/store"
)

// Issue 15 item 7: replay protection never eats a provider's retry. A
// signed final callback whose storing failed (500) is applied when the
// provider sends it again; once applied, a repeat is a harmless 204 no-op,
// also after the carrier was swapped (a configuration update) and after a
// restart (the replay window is in the database).
// SQLite-specific: a full disk injected with a SQLite trigger.
func TestWebhookRetryAfterFailedStore(t *testing.T) {
	h, sim := newPlivoHarness(t, plivosim.Plivo, plivosim.Config{Script: func(plivosim.CallInfo) plivosim.Script {
		return plivosim.Script{RingDelay: plivosim.Never}
	}}, false, onSQLite())
	c := h.campaign(1, store.Settings{}, nil)
	h.do(c.ID, store.OpStart)
	simPoll(t, sim, "the call ringing", func() bool {
		list := h.attempts(c.ID)
		return len(list) == 1 && deref(list[0].RawStatus) == "ringing" && list[0].State == store.AttemptInFlight
	})
	a := h.attempts(c.ID)[0]
	rec, _ := sim.Call(deref(a.ProviderCallID))
	path := fmt.Sprintf("/api/v1/telephony/plivo/status/%d?t=%s", a.ID, url.QueryEscape(h.eng.Token(a.ID)))
	form := url.Values{"CallUUID": {rec.CallUUID}, "RequestUUID": {rec.RequestUUID}, "CallStatus": {"completed"},
		"Event": {"Hangup"}, "Duration": {"12"}, "BillDuration": {"12"}, "To": {rec.To}, "From": {rec.From}, "Direction": {"outbound"}}
	signed := sim.SignHeaders(sim.AuthToken(), h.public+path, http.MethodPost, form)

	// The disk is full when the final callback comes: 500, nothing stored.
	h.rawExec(`CREATE TRIGGER disk_full BEFORE UPDATE OF state ON call_attempts
		WHEN NEW.state = 'done' BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END`)
	if got := plivoPost(t, h, path, form, signed); got != http.StatusInternalServerError {
		t.Fatalf("callback while storing fails: status %d, want 500", got)
	}
	h.rawExec("DROP TRIGGER disk_full")
	// Plivo retries the same signed request: it is applied.
	if got := plivoPost(t, h, path, form, signed); got != http.StatusNoContent {
		t.Fatalf("the provider's retry: status %d, want 204", got)
	}
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 1, 0, 1, 1)
	applied := h.attempts(c.ID)
	if deref(applied[0].Outcome) != "answered" {
		t.Fatalf("outcome %s, want answered (from the retried callback)", deref(applied[0].Outcome))
	}

	// Once applied, the same request is a no-op, through a new carrier and
	// a new engine too.
	if got := plivoPost(t, h, path, form, signed); got != http.StatusNoContent {
		t.Fatalf("repeat: status %d, want 204", got)
	}
	h.eng.ForgetConfig(h.cfgID)
	if got := plivoPost(t, h, path, form, signed); got != http.StatusNoContent {
		t.Fatalf("repeat after a carrier swap: status %d, want 204", got)
	}
	h.crash()
	h.startEngine()
	if got := plivoPost(t, h, path, form, signed); got != http.StatusNoContent {
		t.Fatalf("repeat after a restart: status %d, want 204", got)
	}
	if after := h.attempts(c.ID)[0]; deref(after.Outcome) != "answered" || !after.EndedAt.Equal(*applied[0].EndedAt) {
		t.Fatalf("a repeated callback changed the attempt: %s ended %v", deref(after.Outcome), after.EndedAt)
	}
	if got := h.get(c.ID); got.ProcessedRows != 1 || got.ExecutedCount != 1 {
		t.Fatalf("counters after repeats: processed %d executed %d, want 1 1", got.ProcessedRows, got.ExecutedCount)
	}
}
