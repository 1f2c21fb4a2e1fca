package web

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/storetest"
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

// A credential check that keeps failing (the database unreadable) ends
// every stream once it has failed for credentialFailAfter: a credential
// that cannot be confirmed is not trusted (fail closed). The guard's clock
// moves a second per reading, so the test waits milliseconds.
func TestStreamGuardFailsClosed(t *testing.T) {
	sealer, err := store.NewSealer(make([]byte, store.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), storetest.Location(t), sealer)
	if err != nil {
		t.Fatal(err)
	}
	db.Close() //nolint:errcheck // closed on purpose: every check fails
	g := newStreamGuard(db, slog.New(slog.DiscardHandler), StreamLimits{})
	g.every = time.Millisecond
	var mu sync.Mutex
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	g.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		at = at.Add(time.Second)
		return at
	}
	st := newStream(0, 1)
	r := httptest.NewRequest(http.MethodGet, "/api/v1/events", nil)
	r.Header.Set("X-API-Key", "odk_a")
	if err := g.admit(httptest.NewRecorder(), r, st, store.Principal{APIKeyID: 1, OrganizationID: 1}); err != nil {
		t.Fatal(err)
	}
	defer g.release(st)
	select {
	case <-st.wake:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream was not ended while its credential could not be checked")
	}
	if p := st.take(); !p.ended || p.reason != "credentials cannot be checked" {
		t.Fatalf("stream = ended %v, reason %q; want ended, credentials cannot be checked", p.ended, p.reason)
	}
}
