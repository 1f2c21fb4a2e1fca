package carrier

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/outdial/outdial/dialer/carrier/plivosim"
)

var plivoTarget = Target{Name: "acme main (plivo)",
	AnswerURL: "https://svc.example/api/v1/telephony/plivo/answer",
	StatusURL: "https://svc.example/api/v1/telephony/plivo/status"}

func TestPlivoProvision(t *testing.T) {
	for _, d := range []plivosim.Dialect{plivosim.Plivo, plivosim.Vobiz} {
		sim := plivosim.Start(plivosim.Config{Dialect: d})
		t.Cleanup(sim.Close)
		opts := Options{BaseURLs: map[string]string{string(d): sim.URL()}}
		field, id, err := Provision(context.Background(), string(d), sim.Credentials(false), plivoTarget, opts)
		if err != nil || field != "application_id" || id == "" {
			t.Fatalf("%s: provision %q %q %v", d, field, id, err)
		}
		apps := sim.Apps()
		if len(apps) != 1 || apps[0].AppID != id {
			t.Fatalf("%s: apps %+v, want one with id %s", d, apps, id)
		}
		want := map[string]string{"app_name": "acme-main--plivo", "answer_url": plivoTarget.AnswerURL, "answer_method": "POST",
			"hangup_url": plivoTarget.StatusURL, "hangup_method": "POST"}
		for k, v := range want {
			if apps[0].Body[k] != v {
				t.Fatalf("%s: %s = %q, want %q (body %v)", d, k, apps[0].Body[k], v, apps[0].Body)
			}
		}
		// An application id already stored: nothing is created.
		creds := sim.Credentials(false)
		creds["application_id"] = id
		if f, _, err := Provision(context.Background(), string(d), creds, plivoTarget, opts); f != "" || err != nil {
			t.Fatalf("%s: provision with an id: %q %v", d, f, err)
		}
	}
}

func TestPlivoProvisionErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  *plivosim.Fault
		close  bool
		creds  map[string]any
		status int
		typ    string
		field  string
	}{
		{"bad token", nil, false, map[string]any{"auth_token": "wrong"}, 422, ProvisionAuthFailed, "auth_token"},
		{"forbidden", &plivosim.Fault{Status: 403, Message: "forbidden"}, false, nil, 422, ProvisionAuthFailed, "auth_token"},
		{"account not found", &plivosim.Fault{Status: 404, Message: "account not found"}, false, nil, 404, "", ""},
		{"rejected", &plivosim.Fault{Status: 400, Message: "app_name taken"}, false, nil, 422, ProvisionRejected, "application_id"},
		{"rate limited", plivosim.TooManyRequests(), false, nil, 502, "", ""},
		{"server error", &plivosim.Fault{Status: 500, Message: "boom"}, false, nil, 502, "", ""},
		{"unreachable", nil, true, nil, 502, "", ""},
	} {
		for _, d := range []plivosim.Dialect{plivosim.Plivo, plivosim.Vobiz} {
			sim := plivosim.Start(plivosim.Config{Dialect: d})
			if tc.fault != nil {
				sim.SetFault(func(r plivosim.Request) *plivosim.Fault {
					if r.Op == plivosim.OpCreateApp {
						return tc.fault
					}
					return nil
				})
			}
			creds := sim.Credentials(false)
			for k, v := range tc.creds {
				creds[k] = v
			}
			if tc.close {
				sim.Close()
			}
			_, _, err := Provision(context.Background(), string(d), creds, plivoTarget,
				Options{BaseURLs: map[string]string{string(d): sim.URL()}, HTTPClient: &http.Client{}})
			sim.Close()
			var pe *ProvisionError
			if !errors.As(err, &pe) {
				t.Fatalf("%s %s: error %v, want a *ProvisionError", d, tc.name, err)
			}
			if pe.Status != tc.status || pe.Type != tc.typ || pe.Field != tc.field {
				t.Fatalf("%s %s: %+v, want status %d type %q field %q", d, tc.name, pe, tc.status, tc.typ, tc.field)
			}
			if strings.Contains(pe.Error(), plivosim.DefaultAuthToken) {
				t.Fatalf("%s %s: error leaks the token: %v", d, tc.name, pe)
			}
		}
	}
}

func TestPlivoAppName(t *testing.T) {
	for in, want := range map[string]string{"main": "main", "acme main (plivo)": "acme-main--plivo", "": "outdial",
		"ünï": "n", "--": "outdial", "a_b-c9": "a_b-c9"} {
		if got := plivoAppName(in); got != want {
			t.Errorf("plivoAppName(%q) = %q, want %q", in, got, want)
		}
	}
}
