package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestUpdateConfigPartial(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	created := e.createConfig(e.keyA, "main", false, validConfig("twilio"))
	cid := id(t, created, "id")
	const newToken = "twilio-token-N3w-S3cr3t-0099"
	e.addSecret(newToken)

	r := e.a(http.MethodPut, configPath(cid), map[string]any{"config": map[string]any{"auth_token": newToken}})
	wantStatus(t, r, http.StatusOK)
	got := r.obj(t)
	want := with(wantCredentials("twilio"), "auth_token", mask(newToken))
	if !equalJSON(got["credentials"], want) {
		t.Errorf("credentials = %v, want %v", got["credentials"], want)
	}
	if got["name"] != "main" || got["provider"] != "twilio" || got["created_at"] != created["created_at"] || id(t, got, "id") != cid {
		t.Errorf("detail = %v", got)
	}
	stored, err := e.db.GetTelephonyConfig(context.Background(), e.orgA, cid)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Credentials.String("auth_token") != newToken || stored.Credentials.String("account_sid") != "AC0000000000000001" {
		t.Errorf("stored credentials changed wrongly")
	}

	// Name only; the provider may be sent when it is the same.
	r = e.a(http.MethodPut, configPath(cid), map[string]any{"name": "renamed", "config": map[string]any{"provider": "twilio", "machine_detection": true}})
	wantStatus(t, r, http.StatusOK)
	got = r.obj(t)
	if got["name"] != "renamed" || got["credentials"].(map[string]any)["machine_detection"] != true ||
		got["credentials"].(map[string]any)["auth_token"] != mask(newToken) {
		t.Errorf("detail = %v", got)
	}
	// An empty body changes nothing.
	r = e.a(http.MethodPut, configPath(cid), map[string]any{})
	wantStatus(t, r, http.StatusOK)
	if !equalJSON(without(r.obj(t), "updated_at"), without(got, "updated_at")) {
		t.Errorf("after {}: %s\nwant %v", r.Raw, got)
	}
	// name: null means "not sent".
	r = e.a(http.MethodPut, configPath(cid), map[string]any{"name": nil, "is_default_outbound": nil, "config": nil})
	wantStatus(t, r, http.StatusOK)
	if r.obj(t)["name"] != "renamed" {
		t.Errorf("name = %v after null, want renamed", r.obj(t)["name"])
	}
	// from_numbers is ignored on update too.
	r = e.a(http.MethodPut, configPath(cid), map[string]any{"config": map[string]any{"from_numbers": []string{"+14155552671"}}})
	wantStatus(t, r, http.StatusOK)
	if r.obj(t)["phone_number_count"] != float64(0) {
		t.Errorf("phone_number_count = %v", r.obj(t)["phone_number_count"])
	}
	// GET shows what PUT answered.
	last := r.obj(t)
	g := e.a(http.MethodGet, configPath(cid), nil)
	if !equalJSON(g.Body, last) {
		t.Errorf("GET = %s\nwant %v", g.Raw, last)
	}
}

func TestUpdateProviderImmutable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cid := id(t, e.createConfig(e.keyA, "main", false, validConfig("twilio")), "id")
	for _, p := range []any{"plivo", "Twilio", 5} {
		r := e.a(http.MethodPut, configPath(cid), map[string]any{"config": map[string]any{"provider": p, "auth_token": "x-unused-token"}})
		ps := wantProblems(t, r, "body.config.provider provider_immutable")
		if !strings.Contains(ps[0].Msg, "create a new") {
			t.Errorf("msg = %q, want it to say to create a new configuration", ps[0].Msg)
		}
		if !equalJSON(ps[0].Input, p) {
			t.Errorf("input = %v, want %v", ps[0].Input, p)
		}
	}
	// Nothing changed.
	stored, err := e.db.GetTelephonyConfig(context.Background(), e.orgA, cid)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Provider != "twilio" || stored.Credentials.String("auth_token") != twilioToken {
		t.Fatalf("stored = %s %v", stored.Provider, stored.Credentials.LogValue())
	}
}

// TestUpdateNullClearsOptional checks that null resets each optional field of
// every provider to its default, and that null for a required field is a 422.
func TestUpdateNullClearsOptional(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		provider string
		set      map[string]any // optional fields set on create
		cleared  map[string]any // their values after null
	}{
		{"ari", map[string]any{"ws_client_name": "media", "dial_template": "Local/{number}@from-internal"},
			map[string]any{"ws_client_name": "", "dial_template": "PJSIP/{number}"}},
		// An application field set to null creates a new application at
		// the provider (provision_test.go), so it is not cleared here.
		{"plivo", map[string]any{"machine_detection": true}, map[string]any{"machine_detection": false}},
		{"telnyx", map[string]any{"webhook_public_key": telnyxPublicKey, "machine_detection": true},
			map[string]any{"webhook_public_key": nil, "machine_detection": false}},
		{"twilio", map[string]any{"machine_detection": true}, map[string]any{"machine_detection": false}},
		{"vonage", map[string]any{"signature_secret": vonageSignature, "machine_detection": true},
			map[string]any{"signature_secret": nil, "machine_detection": false}},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			cfg := validConfig(tt.provider)
			for k, v := range tt.set {
				cfg[k] = v
			}
			cid := id(t, e.createConfig(e.keyA, "null-"+tt.provider, false, cfg), "id")
			nulls := map[string]any{}
			for k := range tt.set {
				nulls[k] = nil
			}
			r := e.a(http.MethodPut, configPath(cid), map[string]any{"config": nulls})
			wantStatus(t, r, http.StatusOK)
			creds := r.obj(t)["credentials"].(map[string]any)
			want := wantCredentials(tt.provider)
			for k, v := range tt.cleared {
				want[k] = v
			}
			if !equalJSON(creds, want) {
				t.Errorf("credentials = %v\nwant %v", creds, want)
			}
			// null for a required field is refused and changes nothing.
			req := requiredFields[tt.provider][0]
			r = e.a(http.MethodPut, configPath(cid), map[string]any{"config": map[string]any{req: nil}})
			wantProblems(t, r, "body.config."+req+" string_type")
			g := e.a(http.MethodGet, configPath(cid), nil)
			if !equalJSON(g.obj(t)["credentials"], want) {
				t.Errorf("after refused update: %v", g.obj(t)["credentials"])
			}
		})
	}
}

func TestUpdateValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cid := id(t, e.createConfig(e.keyA, "main", false, validConfig("ari")), "id")
	e.createConfig(e.keyA, "other", false, validConfig("twilio"))
	before := e.a(http.MethodGet, configPath(cid), nil).obj(t)
	tests := []struct {
		name string
		body any
		want []string
	}{
		{"empty name", map[string]any{"name": ""}, []string{"body.name string_too_short"}},
		{"long name", map[string]any{"name": strings.Repeat("x", 65)}, []string{"body.name string_too_long"}},
		{"name number", map[string]any{"name": 3}, []string{"body.name string_type"}},
		{"default string", map[string]any{"is_default_outbound": "sometimes"}, []string{"body.is_default_outbound bool_parsing"}},
		{"config string", map[string]any{"config": "ari"}, []string{"body.config model_type"}},
		{"bad endpoint", map[string]any{"config": map[string]any{"ari_endpoint": "pbx:8088"}}, []string{"body.config.ari_endpoint value_error"}},
		{"empty password", map[string]any{"config": map[string]any{"app_password": ""}}, []string{"body.config.app_password string_too_short"}},
		{"several", map[string]any{"name": "", "config": map[string]any{"provider": "twilio", "ari_endpoint": "x", "app_name": 1}},
			[]string{"body.name string_too_short", "body.config.provider provider_immutable", "body.config.ari_endpoint value_error", "body.config.app_name string_type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblems(t, e.a(http.MethodPut, configPath(cid), tt.body), tt.want...)
			after := e.a(http.MethodGet, configPath(cid), nil).obj(t)
			if !equalJSON(after, before) {
				t.Fatalf("a refused update changed the configuration: %v\nwas %v", after, before)
			}
		})
	}
	t.Run("body problems before existence", func(t *testing.T) {
		wantProblems(t, e.a(http.MethodPut, configPath(999), map[string]any{"name": ""}), "body.name string_too_short")
	})
}

func TestNameUniqueness(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := id(t, e.createConfig(e.keyA, "main", false, validConfig("twilio")), "id")
	b := id(t, e.createConfig(e.keyA, "backup", false, validConfig("plivo")), "id")

	r := e.a(http.MethodPost, configsPath, configBody("main", false, validConfig("vobiz")))
	wantDetailContains(t, r, http.StatusConflict, `"main"`)
	// Names are compared exactly.
	e.createConfig(e.keyA, "Main", false, validConfig("vobiz"))
	// Rename onto a taken name.
	r = e.a(http.MethodPut, configPath(b), map[string]any{"name": "main"})
	wantDetailContains(t, r, http.StatusConflict, `"main"`)
	if got := e.a(http.MethodGet, configPath(b), nil).obj(t)["name"]; got != "backup" {
		t.Errorf("name after refused rename = %v", got)
	}
	// Keeping its own name is no conflict.
	wantStatus(t, e.a(http.MethodPut, configPath(a), map[string]any{"name": "main"}), http.StatusOK)
	// A freed name can be taken.
	wantStatus(t, e.a(http.MethodPut, configPath(a), map[string]any{"name": "primary"}), http.StatusOK)
	wantStatus(t, e.a(http.MethodPut, configPath(b), map[string]any{"name": "main"}), http.StatusOK)
	// Another organization may use any of them.
	e.createConfig(e.keyB, "primary", false, validConfig("twilio"))
	e.createConfig(e.keyB, "main", false, validConfig("twilio"))
}

// defaults returns the ids of the organization's default configurations.
func (e *testEnv) defaults(key string) []int64 {
	e.t.Helper()
	r := e.do(http.MethodGet, configsPath, key, nil)
	wantStatus(e.t, r, http.StatusOK)
	var out []int64
	for _, item := range r.obj(e.t)["configurations"].([]any) {
		it := item.(map[string]any)
		if it["is_default_outbound"] == true {
			out = append(out, id(e.t, it, "id"))
		}
	}
	return out
}

func TestDefaultOutboundSwitch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bDefault := id(t, e.createConfig(e.keyB, "b", true, validConfig("twilio")), "id")
	c1 := id(t, e.createConfig(e.keyA, "one", true, validConfig("twilio")), "id")
	c2 := id(t, e.createConfig(e.keyA, "two", false, validConfig("twilio")), "id")
	check := func(step string, want ...int64) {
		t.Helper()
		got := e.defaults(e.keyA)
		if len(got) != len(want) || (len(want) == 1 && got[0] != want[0]) {
			t.Fatalf("%s: defaults = %v, want %v", step, got, want)
		}
		for _, c := range []int64{c1, c2} {
			isDef := e.a(http.MethodGet, configPath(c), nil).obj(t)["is_default_outbound"] == true
			if isDef != (len(want) == 1 && want[0] == c) {
				t.Fatalf("%s: GET %d is_default_outbound = %v", step, c, isDef)
			}
		}
		if b := e.defaults(e.keyB); len(b) != 1 || b[0] != bDefault {
			t.Fatalf("%s: organization B defaults = %v, want [%d]", step, b, bDefault)
		}
	}
	check("created", c1)
	c3 := id(t, e.createConfig(e.keyA, "three", true, validConfig("plivo")), "id")
	if got := e.defaults(e.keyA); len(got) != 1 || got[0] != c3 {
		t.Fatalf("after creating a new default: %v, want [%d]", got, c3)
	}
	wantStatus(t, e.a(http.MethodDelete, configPath(c3), nil), http.StatusNoContent)
	check("default deleted")
	wantStatus(t, e.a(http.MethodPut, configPath(c2), map[string]any{"is_default_outbound": true}), http.StatusOK)
	check("c2 made default", c2)
	wantStatus(t, e.a(http.MethodPut, configPath(c1), map[string]any{"is_default_outbound": true}), http.StatusOK)
	check("c1 made default", c1)
	// Setting it again keeps it.
	wantStatus(t, e.a(http.MethodPut, configPath(c1), map[string]any{"is_default_outbound": true}), http.StatusOK)
	check("c1 again", c1)
	wantStatus(t, e.a(http.MethodPut, configPath(c1), map[string]any{"is_default_outbound": false}), http.StatusOK)
	check("c1 unset")
	// Changing something else of a non-default leaves the flag alone.
	wantStatus(t, e.a(http.MethodPut, configPath(c2), map[string]any{"is_default_outbound": true}), http.StatusOK)
	wantStatus(t, e.a(http.MethodPut, configPath(c1), map[string]any{"name": "uno"}), http.StatusOK)
	check("rename other", c2)
	id2, err := e.db.DefaultOutboundConfigID(context.Background(), e.orgA)
	if err != nil || id2 != c2 {
		t.Fatalf("store default = %d, %v; want %d", id2, err, c2)
	}
}
