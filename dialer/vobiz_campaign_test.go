package dialer_test

// Full campaigns dialing through the simulator's Vobiz dialect: X-Auth-ID /
// X-Auth-Token requests under /api/v1, one id for the request and the call,
// callbacks signed with X-Vobiz-Signature-V3 and -V2 over the URL without
// its query. The scenarios are plivo_campaign_test.go's.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/outdial/outdial/dialer/carrier/plivosim"
	"github.com/outdial/outdial/store"
)

func TestVobizCampaignOutcomes(t *testing.T)    { plivoCampaignOutcomes(t, plivosim.Vobiz) }
func TestVobizCampaignConcurrency(t *testing.T) { plivoCampaignConcurrency(t, plivosim.Vobiz) }
func TestVobizCampaignLostFinalReconciled(t *testing.T) {
	plivoCampaignLostFinalReconciled(t, plivosim.Vobiz)
}

// TestVobizForgedAndReplayedWebhooks: as for Plivo, except that Vobiz signs
// neither the body nor the query, so the first use of a captured signature
// with another body is accepted (only TLS and the per-attempt URL token
// protect it); every replay of a nonce is a no-op.
func TestVobizForgedAndReplayedWebhooks(t *testing.T) {
	plivoForgedAndReplayedWebhooks(t, plivosim.Vobiz)
}

func TestVobizCampaignRateLimited(t *testing.T) { plivoCampaignRateLimited(t, plivosim.Vobiz) }
func TestVobizCampaignAuthFailure(t *testing.T) { plivoCampaignAuthFailure(t, plivosim.Vobiz) }

// TestVobizHangupEventAtAnswerURL: Vobiz documents Ring and Hangup events
// posted to the answer URL. Such an event is verified and applied as a
// status (204, no markup); a forged one is refused and changes nothing.
func TestVobizHangupEventAtAnswerURL(t *testing.T) {
	h, sim := newPlivoHarness(t, plivosim.Vobiz, plivosim.Config{Script: func(plivosim.CallInfo) plivosim.Script {
		return plivosim.Script{RingDelay: plivosim.Never}
	}}, false)
	c := h.campaign(1, store.Settings{}, nil)
	h.do(c.ID, store.OpStart)
	var a *store.Attempt
	simPoll(t, sim, "the call in flight", func() bool {
		list := h.attempts(c.ID)
		if len(list) == 1 && list[0].State == store.AttemptInFlight {
			a = list[0]
		}
		return a != nil
	})
	answerURL := fmt.Sprintf("%s/api/v1/telephony/vobiz/answer/%d?t=%s", h.public, a.ID, h.eng.Token(a.ID))
	event := url.Values{"Event": {"Hangup"}, "CallStatus": {"busy"}, "CallUUID": {*a.ProviderCallID},
		"RequestUUID": {*a.ProviderCallID}, "HangupCause": {"USER_BUSY"}, "Direction": {"outbound"}}
	if st, err := sim.PostSigned(context.Background(), answerURL, event, "not-the-auth-token"); err != nil || st != http.StatusForbidden {
		t.Fatalf("forged hangup at the answer URL: %d %v, want 403", st, err)
	}
	if got := h.attempts(c.ID)[0]; got.State != store.AttemptInFlight {
		t.Fatalf("after a forged event the attempt is %s, want in flight", got.State)
	}
	if st, err := sim.PostSigned(context.Background(), answerURL, event, sim.AuthToken()); err != nil || st != http.StatusNoContent {
		t.Fatalf("signed hangup at the answer URL: %d %v, want 204", st, err)
	}
	got := h.attempts(c.ID)[0]
	if got.State != store.AttemptDone || deref(got.Outcome) != "busy" {
		t.Fatalf("attempt %s %s, want done busy", got.State, deref(got.Outcome))
	}
}
