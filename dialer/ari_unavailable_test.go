package dialer_test

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier/arisim"
	"github.com/outdial/outdial/dialer/metrics"
	"github.com/outdial/outdial/store"
)

// ariEndpointAt is the Asterisk simulator's ARI configuration with its
// ari_endpoint replaced.
type ariEndpointAt struct {
	ariProvider
	endpoint string
}

func (s ariEndpointAt) Credentials() map[string]any {
	c := s.ariProvider.Credentials()
	c["ari_endpoint"] = s.endpoint
	return c
}

// Issue 20 item 4: an ARI configuration whose endpoint refuses connections
// backs off as before, but the campaign's log and its diagnosis say what
// happened (the events websocket connection to Asterisk at host:port
// cannot be made: connection refused), not that the provider answered
// 429; no credential of the endpoint is repeated; nobody is called and no
// contact's outcome changes.
func TestARIEndpointRefusingSaysWhy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	sim := arisim.Start(arisim.Config{})
	met := metrics.New()
	h := newProviderHarness(t, ariEndpointAt{ariProvider{sim}, "http://probe:hunter2@" + addr}, withMetrics(met))
	c := h.campaign(3, store.Settings{MaxConcurrency: 1}, nil)
	h.do(c.ID, store.OpStart)

	cause := "the events websocket connection to Asterisk at " + addr + " cannot be made (connection refused)"
	h.waitFor("provider_unavailable logged", func() bool { return len(h.logs(c.ID, "provider_unavailable")) > 0 })
	entry := h.logs(c.ID, "provider_unavailable")[0]
	if entry.Level != store.LogWarning || !strings.HasPrefix(entry.Message, cause+"; dialing waits for it") || entry.Details["retry_at"] == nil {
		t.Errorf("provider_unavailable %s %q %v, want a warning %q with retry_at", entry.Level, entry.Message, entry.Details, cause+"; dialing waits for it")
	}
	if got := h.logs(c.ID, "provider_rate_limited"); len(got) != 0 {
		t.Errorf("logged as rate limiting: %+v", got)
	}

	// The diagnosis, while the campaign waits out a back-off.
	var reason dialer.Reason
	h.waitFor("a provider_backoff reason", func() bool {
		d, err := h.eng.Diagnose(context.Background(), h.org, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range d.Reasons {
			if r.Code == dialer.ReasonProviderBack {
				reason = r
				return true
			}
		}
		return false
	})
	if reason.Message != cause+"; the campaign waits before its next call" || reason.Until == nil {
		t.Errorf("provider_backoff %q until %v, want %q with its end", reason.Message, reason.Until, cause+"; the campaign waits before its next call")
	}
	shown := reason.Message + entry.Message + fmt.Sprint(entry.Details)
	// "answered 429", not "429": the simulator's random port may hold
	// those digits (127.0.0.1:41429).
	for _, secret := range []string{"hunter2", "probe", sim.Password(), "answered 429", "too many requests"} {
		if strings.Contains(shown, secret) {
			t.Errorf("the diagnosis or the log says %q: %s", secret, shown)
		}
	}

	// Nobody was called, nobody's outcome changed, nothing counted as the
	// provider's rate limit.
	if st := sim.Stats(); st.Originates != 0 {
		t.Errorf("%d originates, want none", st.Originates)
	}
	now, err := h.db.GetCampaign(context.Background(), h.org, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if now.State != store.StateRunning || now.ProcessedRows != 0 || now.FailedRows != 0 || now.ExecutedCount != 0 {
		t.Errorf("campaign %s processed %d failed %d executed %d, want running with nothing processed", now.State, now.ProcessedRows, now.FailedRows, now.ExecutedCount)
	}
	srv := httptest.NewServer(promhttp.HandlerFor(met.Registry(), promhttp.HandlerOpts{}))
	defer srv.Close()
	fams := scrape(t, srv.URL)
	if got := value(fams, "outdial_provider_rate_limited_total", map[string]string{"provider": "ari"}); got != 0 {
		t.Errorf("outdial_provider_rate_limited_total{ari} = %v, want 0", got)
	}
	if got := value(fams, "outdial_provider_requests_total", map[string]string{"provider": "ari", "status_class": "error"}); got < 1 {
		t.Errorf(`outdial_provider_requests_total{ari,"error"} = %v, want the refusals counted as no HTTP answer`, got)
	}
}
