package dialer_test

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"testing"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// TestForgedCallbacksChangeNothing posts callbacks a forger could make to the
// real router: each is 403 and leaves the attempts, counters and log as they
// were. A genuine one made the same way is accepted, so the 403s are due to
// the forged part alone.
func TestForgedCallbacksChangeNothing(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Human, RingDelay: twiliosim.Never}
	}})
	c := h.campaign(2, store.Settings{}, nil)
	h.do(c.ID, store.OpStart)
	h.waitFor("both calls ringing", func() bool {
		list := h.attempts(c.ID)
		return len(list) == 2 && list[0].State == store.AttemptInFlight && list[1].State == store.AttemptInFlight &&
			deref(list[0].RawStatus) == "ringing" && deref(list[1].RawStatus) == "ringing"
	})
	before, campaignBefore, logsBefore := h.attempts(c.ID), h.get(c.ID), len(h.logs(c.ID, ""))
	a1, a2 := before[0], before[1]
	token := h.sim.AuthToken()
	path := func(provider, kind string, id int64, t string) string {
		return fmt.Sprintf("/api/v1/telephony/%s/%s/%d?t=%s", provider, kind, id, url.QueryEscape(t))
	}
	final := func(a *store.Attempt) url.Values {
		return url.Values{"AccountSid": {h.sim.AccountSID()}, "CallSid": {deref(a.ProviderCallID)}, "CallStatus": {"completed"},
			"CallDuration": {"12"}, "SequenceNumber": {"7"}, "To": {a.PhoneNumber}, "From": {"+14155550100"}}
	}
	forgeries := []struct {
		name, path string
		form       url.Values
		signWith   string
	}{
		{"signed with another auth token", path("twilio", "status", a1.ID, h.eng.Token(a1.ID)), final(a1), "not-the-auth-token"},
		{"no signature", path("twilio", "status", a1.ID, h.eng.Token(a1.ID)), final(a1), ""},
		{"bad token", path("twilio", "status", a1.ID, "forged-token"), final(a1), token},
		{"no token", fmt.Sprintf("/api/v1/telephony/twilio/status/%d", a1.ID), final(a1), token},
		{"another attempt's token", path("twilio", "status", a1.ID, h.eng.Token(a2.ID)), final(a1), token},
		{"another attempt's call", path("twilio", "status", a2.ID, h.eng.Token(a2.ID)), final(a1), token},
		{"unknown attempt", path("twilio", "status", 999999, h.eng.Token(999999)), final(a1), token},
		{"another provider", path("plivo", "status", a1.ID, h.eng.Token(a1.ID)), final(a1), token},
		{"answer signed with another auth token", path("twilio", "answer", a1.ID, h.eng.Token(a1.ID)), final(a1), "not-the-auth-token"},
		{"answer with another attempt's token", path("twilio", "answer", a1.ID, h.eng.Token(a2.ID)), final(a1), token},
	}
	for _, f := range forgeries {
		if got := h.postWebhook(f.path, f.form, f.signWith); got != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", f.name, got)
		}
	}
	if after := h.attempts(c.ID); !reflect.DeepEqual(after, before) {
		for i := range after {
			t.Logf("attempt before %+v\nafter %+v", *before[i], *after[i])
		}
		t.Fatal("forged callbacks changed the attempts")
	}
	after := h.get(c.ID)
	if after.State != campaignBefore.State || after.ProcessedRows != campaignBefore.ProcessedRows ||
		after.FailedRows != campaignBefore.FailedRows || after.ExecutedCount != campaignBefore.ExecutedCount {
		t.Fatalf("forged callbacks changed the campaign: %+v, was %+v", after, campaignBefore)
	}
	if n := len(h.logs(c.ID, "")); n != logsBefore {
		t.Fatalf("forged callbacks logged %d entries", n-logsBefore)
	}

	// The same request, genuine, is applied; the provider's own late
	// callback for that call is then ignored.
	if got := h.postWebhook(path("twilio", "status", a1.ID, h.eng.Token(a1.ID)), final(a1), token); got != http.StatusNoContent {
		t.Fatalf("genuine callback: status %d, want 204", got)
	}
	for _, call := range h.sim.Calls() {
		h.hangUp(call.SID)
	}
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 2, 1, 2, 2)
	outcomes := map[string]string{}
	for _, a := range h.attempts(c.ID) {
		outcomes[a.PhoneNumber] = deref(a.Outcome)
	}
	if outcomes[a1.PhoneNumber] != "answered" || outcomes[a2.PhoneNumber] != "canceled" {
		t.Fatalf("outcomes %v, want %s answered (genuine callback) and %s canceled (hung up)", outcomes, a1.PhoneNumber, a2.PhoneNumber)
	}
}
