package dialer_test

// Full campaigns dialing through the simulator's Vobiz dialect: X-Auth-ID /
// X-Auth-Token requests under /api/v1, one id for the request and the call,
// callbacks signed with X-Vobiz-Signature-V3 and -V2 over the URL without
// its query. The scenarios are plivo_campaign_test.go's.

import (
	"testing"

	"github.com/outdial/outdial/dialer/carrier/plivosim"
)

func TestVobizCampaignOutcomes(t *testing.T)    { plivoCampaignOutcomes(t, plivosim.Vobiz) }
func TestVobizCampaignConcurrency(t *testing.T) { plivoCampaignConcurrency(t, plivosim.Vobiz) }
func TestVobizCampaignLostFinalReconciled(t *testing.T) {
	plivoCampaignLostFinalReconciled(t, plivosim.Vobiz)
}

// TestVobizForgedAndReplayedWebhooks: as for Plivo, except that Vobiz signs
// neither the body nor the query, so the first use of a captured signature
// with another body is accepted (only TLS and the per-attempt URL token
// protect it); every replay of a nonce is refused.
func TestVobizForgedAndReplayedWebhooks(t *testing.T) {
	plivoForgedAndReplayedWebhooks(t, plivosim.Vobiz)
}

func TestVobizCampaignRateLimited(t *testing.T) { plivoCampaignRateLimited(t, plivosim.Vobiz) }
func TestVobizCampaignAuthFailure(t *testing.T) { plivoCampaignAuthFailure(t, plivosim.Vobiz) }
