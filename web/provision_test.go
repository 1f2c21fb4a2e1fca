package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/outdial/outdial/dialer/carrier/cloudonixsim"
	"github.com/outdial/outdial/dialer/carrier/plivosim"
	"github.com/outdial/outdial/dialer/carrier/telnyxsim"
)

// provisionSim is a provider simulator whose application create the API's
// provisioning (API.md 2.3) is tested against.
type provisionSim struct {
	provider  string
	url       string
	config    map[string]any // a create config without the application field
	appField  string         // where the created id is stored
	authField string         // the credential a 401/403 is located at
	// failNext makes the next application create answer status.
	failNext func(status int)
	// creates returns the application-create request bodies seen.
	creates func() []string
	close   func()
}

// appCreates records the bodies of application creates a fault function
// sees, and answers the next one with a fault when failNext armed it.
type appCreates struct {
	mu     sync.Mutex
	bodies []string
	status int
}

func (a *appCreates) see(body []byte) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.bodies = append(a.bodies, string(body))
	st := a.status
	a.status = 0
	return st
}

func (a *appCreates) failNext(status int) { a.mu.Lock(); a.status = status; a.mu.Unlock() }

func (a *appCreates) seen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.bodies...)
}

func cloudonixProvisionSim() provisionSim {
	sim := cloudonixsim.Start(cloudonixsim.Config{})
	rec := &appCreates{}
	sim.SetFault(func(r cloudonixsim.Request) *cloudonixsim.Fault {
		if r.Op != cloudonixsim.OpCreateApp {
			return nil
		}
		if st := rec.see(r.Body); st != 0 {
			return &cloudonixsim.Fault{Status: st, Message: http.StatusText(st)}
		}
		return nil
	})
	creds := sim.Credentials("")
	delete(creds, "application_name")
	creds["provider"] = "cloudonix"
	return provisionSim{provider: "cloudonix", url: sim.URL(), config: creds, appField: "application_name",
		authField: "bearer_token", failNext: rec.failNext, creates: rec.seen, close: sim.Close}
}

func plivoLikeProvisionSim(d plivosim.Dialect, provider string) func() provisionSim {
	return func() provisionSim {
		sim := plivosim.Start(plivosim.Config{Dialect: d})
		rec := &appCreates{}
		sim.SetFault(func(r plivosim.Request) *plivosim.Fault {
			if r.Op != plivosim.OpCreateApp {
				return nil
			}
			body, _ := json.Marshal(r.Body)
			if st := rec.see(body); st != 0 {
				return &plivosim.Fault{Status: st, Message: http.StatusText(st)}
			}
			return nil
		})
		creds := sim.Credentials(false)
		delete(creds, "application_id")
		creds["provider"] = provider
		return provisionSim{provider: provider, url: sim.URL(), config: creds, appField: "application_id",
			authField: "auth_token", failNext: rec.failNext, creates: rec.seen, close: sim.Close}
	}
}

func telnyxProvisionSim() provisionSim {
	sim := telnyxsim.Start(telnyxsim.Config{})
	rec := &appCreates{}
	sim.SetFault(func(r telnyxsim.Request) *telnyxsim.Fault {
		if r.Op != telnyxsim.OpCreateApplication {
			return nil
		}
		if st := rec.see(r.Body); st != 0 {
			return &telnyxsim.Fault{Status: st, Title: http.StatusText(st), Detail: http.StatusText(st)}
		}
		return nil
	})
	creds := sim.Credentials("", true, false)
	delete(creds, "connection_id")
	creds["provider"] = "telnyx"
	return provisionSim{provider: "telnyx", url: sim.URL(), config: creds, appField: "connection_id",
		authField: "api_key", failNext: rec.failNext, creates: rec.seen, close: sim.Close}
}

// provisionSims are the providers whose configurations get an application.
var provisionSims = []func() provisionSim{
	cloudonixProvisionSim,
	plivoLikeProvisionSim(plivosim.Plivo, "plivo"),
	plivoLikeProvisionSim(plivosim.Vobiz, "vobiz"),
	telnyxProvisionSim,
}

// Creating or updating a configuration without an application id creates
// the application at the provider, pointing at the service's application
// URLs, and stores its id; the provider's refusals map to 422 (401/403),
// 404 and 502 (5xx, unreachable) and nothing is saved.
func TestProvisionApplication(t *testing.T) {
	t.Parallel()
	for _, mk := range provisionSims {
		p := mk()
		closeOnce := sync.OnceFunc(p.close)
		p.close = closeOnce
		t.Run(p.provider, func(t *testing.T) {
			defer p.close()
			e := newEnv(t)
			if secret, ok := p.config[p.authField].(string); ok {
				e.addSecret(secret)
			}
			e.carriers.BaseURLs[p.provider] = p.url
			e.restart()

			r := e.a(http.MethodPost, configsPath, configBody("main", true, p.config))
			wantStatus(t, r, http.StatusOK)
			got := r.obj(t)
			appID, _ := got["credentials"].(map[string]any)[p.appField].(string)
			if appID == "" {
				t.Fatalf("credentials.%s is empty: %v", p.appField, got["credentials"])
			}
			creates := p.creates()
			if len(creates) != 1 || !strings.Contains(creates[0], e.srv.URL+"/api/v1/telephony/"+p.provider+"/") {
				t.Fatalf("application creates = %q, want one pointing at %s/api/v1/telephony/%s/...", creates, e.srv.URL, p.provider)
			}
			cid := id(t, got, "id")

			// A duplicate name is refused before the provider is asked.
			r = e.a(http.MethodPost, configsPath, configBody("main", false, p.config))
			wantStatus(t, r, http.StatusConflict)
			if n := len(p.creates()); n != 1 {
				t.Fatalf("application creates after a duplicate name = %d, want 1", n)
			}

			failures := []struct {
				status, want int
				loc          string
			}{
				{http.StatusUnauthorized, http.StatusUnprocessableEntity, "body.config." + p.authField + " provider_auth_failed"},
				{http.StatusForbidden, http.StatusUnprocessableEntity, "body.config." + p.authField + " provider_auth_failed"},
				{http.StatusNotFound, http.StatusNotFound, ""},
				{http.StatusInternalServerError, http.StatusBadGateway, ""},
				{http.StatusServiceUnavailable, http.StatusBadGateway, ""},
			}
			for _, f := range failures {
				p.failNext(f.status)
				r := e.a(http.MethodPost, configsPath, configBody("second", false, p.config))
				if f.loc != "" {
					wantProblems(t, r, f.loc)
				} else {
					wantStatus(t, r, f.want)
				}
			}
			list := e.a(http.MethodGet, configsPath, nil).obj(t)["configurations"].([]any)
			if len(list) != 1 {
				t.Fatalf("configurations after failed creates = %d, want 1 (nothing saved)", len(list))
			}

			// An update to a taken name creates nothing at the provider.
			other := id(t, e.createConfig(e.keyA, "other", false, with(p.config, p.appField, "kept-app")), "id")
			before := len(p.creates())
			r = e.a(http.MethodPut, configPath(other), map[string]any{"name": "main", "config": map[string]any{p.appField: nil}})
			wantStatus(t, r, http.StatusConflict)
			if n := len(p.creates()); n != before {
				t.Fatalf("application creates after an update to a taken name = %d, want %d", n, before)
			}

			// An update that clears the application id creates a new one;
			// a failing create leaves the configuration as it was.
			p.failNext(http.StatusInternalServerError)
			r = e.a(http.MethodPut, configPath(cid), map[string]any{"config": map[string]any{p.appField: nil}})
			wantStatus(t, r, http.StatusBadGateway)
			g := e.a(http.MethodGet, configPath(cid), nil).obj(t)
			if v := g["credentials"].(map[string]any)[p.appField]; v != appID {
				t.Fatalf("%s after a failed update = %v, want %s", p.appField, v, appID)
			}
			r = e.a(http.MethodPut, configPath(cid), map[string]any{"config": map[string]any{p.appField: ""}})
			wantStatus(t, r, http.StatusOK)
			if v, _ := r.obj(t)["credentials"].(map[string]any)[p.appField].(string); v == "" {
				t.Fatalf("%s after the update = %q, want a new application", p.appField, v)
			}

			// The provider unreachable: 502 naming the provider, never the
			// address that refused the connection (logged instead).
			p.close()
			r = e.a(http.MethodPost, configsPath, configBody("third", false, p.config))
			wantDetail(t, r, http.StatusBadGateway, p.provider+": provider unreachable")
			if logs := e.logs.String(); !strings.Contains(logs, `msg="upstream error"`) || !strings.Contains(logs, "127.0.0.1:") {
				t.Fatalf("log does not carry the transport error:\n%s", logs)
			}
		})
	}
}

// TestProvisionUnreachableHidesNetworkDetails: when a provider's host does
// not resolve, the 502 says "provider unreachable" and names the provider,
// but not the resolver's address nor the lookup error, which go to the log.
func TestProvisionUnreachableHidesNetworkDetails(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"plivo", "vobiz", "telnyx", "cloudonix"} {
		t.Run(provider, func(t *testing.T) {
			e := newEnv(t)
			// .invalid never resolves (RFC 2606); the closed port of the
			// other providers gives "dial tcp 127.0.0.1:<port>".
			e.carriers.BaseURLs[provider] = "http://api." + provider + ".invalid"
			e.restart()
			cfg := without(validConfig(provider), carrierAppField[provider])
			r := e.a(http.MethodPost, configsPath, configBody("main", false, cfg))
			detail := wantDetailContains(t, r, http.StatusBadGateway, "provider unreachable")
			if detail != provider+": provider unreachable" {
				t.Errorf("detail = %q, want %q", detail, provider+": provider unreachable")
			}
			for _, leak := range []string{"lookup", ".invalid", ":53", "dial", "127.0.0.1", "no such host"} {
				if strings.Contains(string(r.Raw), leak) {
					t.Errorf("body %s contains %q", r.Raw, leak)
				}
			}
			if logs := e.logs.String(); !strings.Contains(logs, "api."+provider+".invalid") {
				t.Errorf("log does not carry the lookup error:\n%s", logs)
			}
			if n := len(e.a(http.MethodGet, configsPath, nil).obj(t)["configurations"].([]any)); n != 0 {
				t.Errorf("configurations = %d, want 0 (nothing saved)", n)
			}
		})
	}
}

// carrierAppField is the config field an auto-created application's id is
// stored in.
var carrierAppField = map[string]string{"plivo": "application_id", "vobiz": "application_id",
	"telnyx": "connection_id", "cloudonix": "application_name"}
