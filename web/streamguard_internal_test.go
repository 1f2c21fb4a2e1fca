package web

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/console"
)

// A credential that holds its most streams is refused before any
// authentication (the guard has no database here: a read would panic);
// another credential, or one below its bounds, goes on to authentication;
// a released stream gives its place back.
func TestStreamGuardRefusesKnownCredentials(t *testing.T) {
	g := newStreamGuard(nil, slog.New(slog.DiscardHandler), StreamLimits{PerKey: 2, PerOrg: 3, Total: 10})
	g.checking = true // no checker goroutine: it would read the database
	req := func(header, value string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/events", nil)
		if header == "Cookie" {
			r.AddCookie(&http.Cookie{Name: console.SessionCookie, Value: value})
		} else if header != "" {
			r.Header.Set(header, value)
		}
		return r
	}
	keyA := store.Principal{APIKeyID: 1, OrganizationID: 1}
	keyB := store.Principal{APIKeyID: 2, OrganizationID: 1}
	w := httptest.NewRecorder()
	var held []*stream
	for range 2 {
		st := newStream(0, 1)
		if err := g.admit(w, req("X-API-Key", "odk_a"), st, keyA); err != nil {
			t.Fatal(err)
		}
		held = append(held, st)
	}
	for _, tc := range []struct {
		name          string
		header, value string
		refused       bool
	}{
		{"the same key by X-API-Key", "X-API-Key", "odk_a", true},
		{"the same key as a bearer token", "Authorization", "Bearer odk_a", true},
		{"another key", "X-API-Key", "odk_b", false},
		{"a session cookie", "Cookie", "odk_a", false},
		{"no credential", "", "", false},
	} {
		err := g.refuseKnown(httptest.NewRecorder(), req(tc.header, tc.value))
		if (err != nil) != tc.refused {
			t.Errorf("%s: refused = %v (%v), want %v", tc.name, err != nil, err, tc.refused)
		}
	}
	// The organization's bound applies to its other keys known here.
	st := newStream(0, 1)
	if err := g.admit(w, req("X-API-Key", "odk_b"), st, keyB); err != nil {
		t.Fatal(err)
	}
	if err := g.refuseKnown(httptest.NewRecorder(), req("X-API-Key", "odk_b")); err == nil {
		t.Error("key b, its organization at its bound: not refused")
	}
	g.release(held[0])
	g.release(st)
	if err := g.refuseKnown(httptest.NewRecorder(), req("X-API-Key", "odk_a")); err != nil {
		t.Errorf("after a release: %v, want nil", err)
	}
	g.release(held[1])
	if g.open() != 0 || len(g.byCred) != 0 || len(g.perKey) != 0 || len(g.perOrg) != 0 {
		t.Errorf("after every release: %d open, %d credentials, %v %v", g.open(), len(g.byCred), g.perKey, g.perOrg)
	}
}
