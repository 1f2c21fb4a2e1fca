package cmd

import (
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/metrics"
	"github.com/outdial/outdial/store"
)

// providerURLEnv names the variables that override providers' API base
// URLs (regional endpoints, tests).
var providerURLEnv = map[string]string{
	carrier.Twilio:    "OUTDIAL_TWILIO_API_URL",
	carrier.Plivo:     "OUTDIAL_PLIVO_API_URL",
	carrier.Vobiz:     "OUTDIAL_VOBIZ_API_URL",
	carrier.Telnyx:    "OUTDIAL_TELNYX_API_URL",
	carrier.Vonage:    "OUTDIAL_VONAGE_API_URL",
	carrier.Cloudonix: "OUTDIAL_CLOUDONIX_API_URL",
}

// buildDialer returns the campaign engine, not started, placing calls with
// carriers (the providers' API base URLs). met receives its metrics (nil:
// none). node names this node in its campaign leases, which last leaseTTL
// without renewal (0: dialer.DefaultLeaseTTL).
func buildDialer(f *pflag.FlagSet, db *store.DB, sealer *store.Sealer, public *url.URL, log *slog.Logger, met *metrics.Metrics,
	carriers carrier.Options, node string, leaseTTL time.Duration) *dialer.Engine {
	agentURL, _ := f.GetString("agent-url")
	maxCall, _ := f.GetInt64("max-call-seconds")
	carriers.Logger = log // the ARI events websocket's failures
	return dialer.New(dialer.Config{
		DB: db, Log: log, PublicURL: public.String(), TokenKey: sealer.Derive("webhook-token"),
		AgentURL: agentURL, MaxCallSeconds: int(maxCall), Carriers: carriers, Metrics: met,
		Node: node, LeaseTTL: leaseTTL,
	})
}

// carrierOptions are the provider options of the dialer and of the API's
// application provisioning: the OUTDIAL_*_API_URL base URLs.
func carrierOptions() carrier.Options {
	base := map[string]string{}
	for provider, env := range providerURLEnv {
		if v := os.Getenv(env); v != "" {
			base[provider] = v
		}
	}
	return carrier.Options{BaseURLs: base}
}
