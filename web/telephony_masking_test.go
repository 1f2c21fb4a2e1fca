package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestMaskingEverySensitiveField sets each sensitive field of each provider to
// values of several lengths and checks the exact masked form in the create
// answer, GET and the PUT answer, and that the list form shows no credentials.
func TestMaskingEverySensitiveField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	values := []struct{ in, want string }{
		{"sk_live_abcd1234", "************1234"}, // API.md 2.2's example
		{"abcde", "*bcde"},
		{"abcd", "****"},
		{"abc", "***"},
		{"a", "*"},
		{"pässwörd-Ünï1234", "************1234"}, // characters, not bytes
		{"tok_ÄÖÜ€", "****ÄÖÜ€"},
	}
	n := 0
	for _, provider := range providerNames {
		for _, field := range sensitiveFields[provider] {
			for _, v := range values {
				n++
				t.Run(fmt.Sprintf("%s/%s/%s", provider, field, v.in), func(t *testing.T) {
					if field == "private_key" {
						// A private key must be a PEM; check its mask whole.
						v.in, v.want = rsaPEM, strings.Repeat("*", len(rsaPEM)-4)+rsaPEM[len(rsaPEM)-4:]
					}
					if len([]rune(v.in)) >= 8 {
						e.addSecret(v.in)
					}
					cfg := with(validConfig(provider), field, v.in)
					got := e.createConfig(e.keyA, fmt.Sprintf("mask-%d", n), false, cfg)
					creds := got["credentials"].(map[string]any)
					if creds[field] != v.want {
						t.Fatalf("create: credentials.%s = %q, want %q", field, creds[field], v.want)
					}
					for _, other := range sensitiveFields[provider] {
						if other != field && creds[other] != mask(cfg[other].(string)) {
							t.Errorf("credentials.%s = %v, want masked", other, creds[other])
						}
					}
					cid := id(t, got, "id")
					g := e.a(http.MethodGet, configPath(cid), nil)
					if c := g.obj(t)["credentials"].(map[string]any); c[field] != v.want {
						t.Errorf("GET: credentials.%s = %q, want %q", field, c[field], v.want)
					}
					u := e.a(http.MethodPut, configPath(cid), map[string]any{"name": fmt.Sprintf("mask-%d-u", n)})
					if c := u.obj(t)["credentials"].(map[string]any); c[field] != v.want {
						t.Errorf("PUT: credentials.%s = %q, want %q", field, c[field], v.want)
					}
				})
				if field == "private_key" {
					break
				}
			}
		}
	}
	r := e.a(http.MethodGet, configsPath, nil)
	for _, item := range r.obj(t)["configurations"].([]any) {
		if _, has := item.(map[string]any)["credentials"]; has {
			t.Fatalf("list item has credentials: %v", item)
		}
	}
}

// TestRoundTrip sends a GET response's credentials back as the config of a
// PUT, for every provider (with and without the optional fields), and checks
// that nothing changes: not the answer, not the secrets in the store.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	type variant struct {
		name string
		cfg  map[string]any
	}
	var variants []variant
	for _, p := range providerNames {
		variants = append(variants, variant{p, validConfig(p)})
	}
	variants = append(variants,
		variant{"ari full", with(validConfig("ari"), "ws_client_name", "m", "dial_template", "PJSIP/{number}@trunk")},
		variant{"telnyx minimal", without(validConfig("telnyx"), "webhook_public_key")},
		variant{"telnyx full", with(validConfig("telnyx"), "connection_id", "c-9", "machine_detection", true)},
		variant{"vonage minimal", without(validConfig("vonage"), "signature_secret")},
		variant{"vonage pkcs8", with(validConfig("vonage"), "private_key", rsaPKCS8PEM, "machine_detection", true)},
		variant{"plivo full", with(validConfig("plivo"), "application_id", "app", "machine_detection", true)},
		variant{"short secrets", with(validConfig("twilio"), "auth_token", "abcd")},
		variant{"unicode secret", with(validConfig("cloudonix"), "bearer_token", "jéton-Ü-секрет")},
	)
	e.addSecret("jéton-Ü-секрет")
	for i, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			created := e.createConfig(e.keyA, fmt.Sprintf("rt-%d", i), i == 0, v.cfg)
			cid := id(t, created, "id")
			storedBefore, err := e.db.GetTelephonyConfig(context.Background(), e.orgA, cid)
			if err != nil {
				t.Fatal(err)
			}
			got := e.a(http.MethodGet, configPath(cid), nil).obj(t)
			bodies := []map[string]any{
				{"config": got["credentials"]},
				{"name": got["name"], "is_default_outbound": got["is_default_outbound"],
					"config": with(got["credentials"].(map[string]any), "provider", got["provider"])},
			}
			for j, body := range bodies {
				r := e.a(http.MethodPut, configPath(cid), body)
				wantStatus(t, r, http.StatusOK)
				if after := r.obj(t); !equalJSON(without(after, "updated_at"), without(got, "updated_at")) {
					t.Errorf("body %d: PUT answer = %v\nwant %v", j, after, got)
				}
				storedAfter, err := e.db.GetTelephonyConfig(context.Background(), e.orgA, cid)
				if err != nil {
					t.Fatal(err)
				}
				if !equalJSON(storedAfter.Credentials, storedBefore.Credentials) {
					t.Errorf("body %d: stored credentials changed", j)
				}
			}
		})
	}
}

// TestMaskedValueOfAnotherSecretIsNew checks that only the masked form of the
// stored value keeps it: a different value is stored, even one that masks to
// the same last characters.
func TestMaskedValueOfAnotherSecretIsNew(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cid := id(t, e.createConfig(e.keyA, "m", false, validConfig("twilio")), "id")
	tests := []struct{ sent, stored string }{
		{"******************0005", "******************0005"}, // one star short: a new value
		{"x" + twilioToken[1:], "x" + twilioToken[1:]},
	}
	e.addSecret(tests[1].stored)
	for _, tt := range tests {
		wantStatus(t, e.a(http.MethodPut, configPath(cid), map[string]any{"config": map[string]any{"auth_token": tt.sent}}), http.StatusOK)
		stored, err := e.db.GetTelephonyConfig(context.Background(), e.orgA, cid)
		if err != nil {
			t.Fatal(err)
		}
		if got := stored.Credentials.String("auth_token"); got != tt.stored {
			t.Errorf("sent %q: stored auth_token = %q", tt.sent, got)
		}
	}
}
