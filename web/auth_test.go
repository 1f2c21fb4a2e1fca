package web_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/outdial/outdial/store"
)

// endpoint is one authenticated route with a request that would succeed for
// the owner of the ids in it.
type endpoint struct {
	method, path string
	body         any
}

// authedEndpoints lists every authenticated route of sections 2.1–2.6, using
// configuration cid and its phone number nid.
func authedEndpoints(cid, nid int64) []endpoint {
	return []endpoint{
		{http.MethodGet, providersPath, nil},
		{http.MethodPost, configsPath, configBody("ep", false, validConfig("twilio"))},
		{http.MethodGet, configsPath, nil},
		{http.MethodGet, configPath(cid), nil},
		{http.MethodPut, configPath(cid), map[string]any{"name": "ep-renamed"}},
		{http.MethodDelete, configPath(cid), nil},
		{http.MethodPost, numbersPath(cid), map[string]any{"address": "+14155552690"}},
		{http.MethodGet, numbersPath(cid), nil},
		{http.MethodPut, numberPath(cid, nid), map[string]any{"label": "x"}},
		{http.MethodDelete, numberPath(cid, nid), nil},
	}
}

func TestAuthRequired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cid := id(t, e.createConfig(e.keyA, "main", false, validConfig("twilio")), "id")
	nid := id(t, e.createNumber(e.keyA, cid, map[string]any{"address": "+14155552671"}), "id")
	before := e.a(http.MethodGet, configPath(cid), nil).Raw

	revoked, revokedKey, err := e.db.CreateAPIKey(context.Background(), "org-a", "to revoke", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do(http.MethodGet, configsPath, revokedKey.Reveal(), nil), http.StatusOK)
	if err := e.db.RevokeAPIKey(context.Background(), revoked.ID); err != nil {
		t.Fatal(err)
	}
	const unknownKey = "odk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	tests := []struct {
		name    string
		headers []string
		detail  string
	}{
		{"no credentials", nil, "Not authenticated"},
		{"empty X-API-Key", []string{"X-API-Key", "   "}, "Not authenticated"},
		{"basic auth", []string{"Authorization", "Basic dXNlcjpwYXNz"}, "Not authenticated"},
		{"bearer without token", []string{"Authorization", "Bearer"}, "Not authenticated"},
		{"bearer with blank token", []string{"Authorization", "Bearer    "}, "Not authenticated"},
		{"unknown key", []string{"X-API-Key", unknownKey}, "Invalid API key"},
		{"not a key", []string{"X-API-Key", "hunter2"}, "Invalid API key"},
		{"unknown bearer", []string{"Authorization", "Bearer " + unknownKey}, "Invalid API key"},
		{"revoked key", []string{"X-API-Key", revokedKey.Reveal()}, "Invalid API key"},
		{"revoked bearer", []string{"Authorization", "Bearer " + revokedKey.Reveal()}, "Invalid API key"},
		{"key with a character changed", []string{"X-API-Key", e.keyA[:len(e.keyA)-1] + flip(e.keyA[len(e.keyA)-1])}, "Invalid API key"},
		{"X-API-Key wins over a valid bearer", []string{"X-API-Key", unknownKey, "Authorization", "Bearer " + e.keyA}, "Invalid API key"},
	}
	for _, ep := range authedEndpoints(cid, nid) {
		for _, tt := range tests {
			t.Run(ep.method+" "+ep.path+"/"+tt.name, func(t *testing.T) {
				r := e.do(ep.method, ep.path, "", ep.body, tt.headers...)
				wantDetail(t, r, http.StatusUnauthorized, tt.detail)
				if got := r.Header.Get("WWW-Authenticate"); got != "Bearer" {
					t.Errorf("WWW-Authenticate = %q, want Bearer", got)
				}
			})
		}
	}
	// Nothing was changed by any refused request.
	if after := e.a(http.MethodGet, configPath(cid), nil).Raw; string(after) != string(before) {
		t.Fatalf("configuration changed by unauthenticated requests:\n%s\nwas\n%s", after, before)
	}
	if n := len(e.a(http.MethodGet, configsPath, nil).obj(t)["configurations"].([]any)); n != 1 {
		t.Fatalf("configurations = %d, want 1", n)
	}
	// Authentication comes before path validation.
	wantDetail(t, e.do(http.MethodGet, configsPath+"/abc", "", nil), http.StatusUnauthorized, "Not authenticated")
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

func TestAuthHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createConfig(e.keyA, "a-config", false, validConfig("twilio"))
	e.createConfig(e.keyB, "b-config", false, validConfig("twilio"))
	listNames := func(r response) []string {
		t.Helper()
		wantStatus(t, r, http.StatusOK)
		var out []string
		for _, item := range r.obj(t)["configurations"].([]any) {
			out = append(out, item.(map[string]any)["name"].(string))
		}
		return out
	}
	tests := []struct {
		name    string
		headers []string
		want    string
	}{
		{"X-API-Key", []string{"X-API-Key", e.keyA}, "a-config"},
		{"Bearer", []string{"Authorization", "Bearer " + e.keyB}, "b-config"},
		{"bearer lower case", []string{"Authorization", "bearer " + e.keyA}, "a-config"},
		{"X-API-Key wins", []string{"X-API-Key", e.keyA, "Authorization", "Bearer " + e.keyB}, "a-config"},
		{"X-API-Key wins over a bad bearer", []string{"X-API-Key", e.keyB, "Authorization", "Bearer nonsense"}, "b-config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := listNames(e.do(http.MethodGet, configsPath, "", nil, tt.headers...))
			if len(got) != 1 || got[0] != tt.want {
				t.Fatalf("configurations = %v, want [%s]", got, tt.want)
			}
		})
	}
}

func TestPublicEndpoints(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, path := range []string{healthPath, "/api/v1/openapi.json"} {
		for _, key := range []string{"", "odk_invalid"} {
			r := e.do(http.MethodGet, path, key, nil)
			wantStatus(t, r, http.StatusOK)
			if r.Header.Get("WWW-Authenticate") != "" {
				t.Errorf("%s: WWW-Authenticate on a public endpoint", path)
			}
		}
	}
}

// TestCrossOrganizationIsolation checks every endpoint as organization B on
// organization A's configuration and phone number: each is a 404 exactly as
// for an id that does not exist, lists do not show them, nothing of A's
// changes, and B can reuse A's names and numbers.
func TestCrossOrganizationIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ca := id(t, e.createConfig(e.keyA, "main", true, validConfig("vonage")), "id")
	na := id(t, e.createNumber(e.keyA, ca, map[string]any{"address": "+14155552671", "is_default_caller_id": true}), "id")
	cb := id(t, e.createConfig(e.keyB, "b-own", false, validConfig("twilio")), "id")
	nb := id(t, e.createNumber(e.keyB, cb, map[string]any{"address": "+14155552672"}), "id")
	beforeConfig := string(e.a(http.MethodGet, configPath(ca), nil).Raw)
	beforeNumbers := string(e.a(http.MethodGet, numbersPath(ca), nil).Raw)
	beforeList := string(e.a(http.MethodGet, configsPath, nil).Raw)

	cfgGone := "telephony configuration " + itoa(ca) + " not found"
	numGone := "phone number " + itoa(na) + " not found"
	tests := []struct {
		method, path string
		body         any
		detail       string
	}{
		{http.MethodGet, configPath(ca), nil, cfgGone},
		{http.MethodPut, configPath(ca), map[string]any{"name": "stolen", "is_default_outbound": false}, cfgGone},
		{http.MethodPut, configPath(ca), map[string]any{"config": map[string]any{"provider": "vonage", "api_key": "x"}}, cfgGone},
		{http.MethodDelete, configPath(ca), nil, cfgGone},
		{http.MethodPost, numbersPath(ca), map[string]any{"address": "+14155552673"}, cfgGone},
		{http.MethodGet, numbersPath(ca), nil, cfgGone},
		{http.MethodPut, numberPath(ca, na), map[string]any{"label": "stolen", "is_active": false}, numGone},
		{http.MethodDelete, numberPath(ca, na), nil, numGone},
		// A's number through B's own configuration.
		{http.MethodPut, numberPath(cb, na), map[string]any{"label": "stolen"}, numGone},
		{http.MethodDelete, numberPath(cb, na), nil, numGone},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			wantDetail(t, e.b(tt.method, tt.path, tt.body), http.StatusNotFound, tt.detail)
		})
	}
	// An id that does not exist at all answers the same way.
	wantDetail(t, e.b(http.MethodGet, configPath(ca+1000), nil), http.StatusNotFound, "telephony configuration "+itoa(ca+1000)+" not found")
	// A's number is not reachable through A's path with B's number either.
	wantDetail(t, e.a(http.MethodPut, numberPath(ca, nb), map[string]any{"label": "x"}), http.StatusNotFound, "phone number "+itoa(nb)+" not found")

	// Lists show only the caller's own.
	for _, tc := range []struct {
		key  string
		want []int64
	}{{e.keyA, []int64{ca}}, {e.keyB, []int64{cb}}} {
		list := e.do(http.MethodGet, configsPath, tc.key, nil).obj(t)["configurations"].([]any)
		if len(list) != len(tc.want) || id(t, list[0].(map[string]any), "id") != tc.want[0] {
			t.Errorf("list = %v, want ids %v", list, tc.want)
		}
	}
	numsB := e.b(http.MethodGet, numbersPath(cb), nil).obj(t)["phone_numbers"].([]any)
	if len(numsB) != 1 || id(t, numsB[0].(map[string]any), "id") != nb {
		t.Errorf("B's numbers = %v", numsB)
	}
	// Nothing of A's changed.
	if got := string(e.a(http.MethodGet, configPath(ca), nil).Raw); got != beforeConfig {
		t.Errorf("A's configuration changed:\n%s\nwas\n%s", got, beforeConfig)
	}
	if got := string(e.a(http.MethodGet, numbersPath(ca), nil).Raw); got != beforeNumbers {
		t.Errorf("A's numbers changed:\n%s\nwas\n%s", got, beforeNumbers)
	}
	// B's default does not touch A's.
	e.createConfig(e.keyB, "main", true, validConfig("plivo"))
	e.createNumber(e.keyB, cb, map[string]any{"address": "+14155552671", "is_default_caller_id": true})
	if got := string(e.a(http.MethodGet, configsPath, nil).Raw); got != beforeList {
		t.Errorf("A's list changed:\n%s\nwas\n%s", got, beforeList)
	}
	if got := string(e.a(http.MethodGet, numbersPath(ca), nil).Raw); got != beforeNumbers {
		t.Errorf("A's numbers changed:\n%s\nwas\n%s", got, beforeNumbers)
	}
}
