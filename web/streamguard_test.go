package web_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web"
	"github.com/outdial/outdial/web/console"
)

// waitEnd reads c until its stream ends and returns the comment lines it
// got; it fails the test when the stream is still open after 10 s (a hang
// guard: the promise is an end within about a second).
func waitEnd(t *testing.T, c *sseClient, what string) []string {
	t.Helper()
	var comments []string
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				return comments
			}
			if ev.comment {
				comments = append(comments, ev.data)
			}
		case <-deadline:
			t.Fatalf("%s: the stream is still open 10 s later", what)
		}
	}
}

// An event stream lives no longer than its credential (API.md 10, amended):
// it ends when its API key is revoked (by the CLI, another process: the
// server learns it from the database only), when its console session is
// signed out through the console, expires, or its key is revoked; with a
// comment line saying why, and the credential then answers 401. Streams of
// other credentials go on.
func TestEventStreamEndsWithItsCredential(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true})
	ctx := context.Background()
	s := ce.setup(false)
	cid := ce.newCampaign(s, 1)

	newKey := func(name string) (string, int64) {
		k, sec, err := ce.db.CreateAPIKey(ctx, "org-a", name, store.RoleAdmin)
		if err != nil {
			t.Fatal(err)
		}
		return sec.Reveal(), k.ID
	}
	// A bystander on the same organization, with its own key, keeps its
	// stream through every case.
	bystander := ce.openEvents("/api/v1/events", ce.keyA)
	wantStatus200(t, bystander)

	cases := []struct {
		name   string
		path   string
		cookie bool // open with a console session of a new key instead of the key
		end    func(key string, keyID int64, cookie, csrf string)
		reason string
	}{
		{"key revoked, organization stream", "/api/v1/events", false, func(_ string, id int64, _, _ string) {
			if err := ce.db.RevokeAPIKey(ctx, id); err != nil {
				t.Fatal(err)
			}
		}, "API key revoked"},
		{"key revoked, campaign stream", eventsPath(cid), false, func(_ string, id int64, _, _ string) {
			if err := ce.db.RevokeAPIKey(ctx, id); err != nil {
				t.Fatal(err)
			}
		}, "API key revoked"},
		{"session signed out in the console", "/api/v1/events", true, func(_ string, _ int64, cookie, csrf string) {
			req, _ := http.NewRequest(http.MethodPost, ce.srv.URL+console.Prefix+"sign-out",
				strings.NewReader(url.Values{"csrf_token": {csrf}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Cookie", cookie)
			cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			res, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusSeeOther {
				t.Fatalf("sign-out = %d, want 303", res.StatusCode)
			}
		}, "session ended"},
		{"session's key revoked", eventsPath(cid), true, func(_ string, id int64, _, _ string) {
			if err := ce.db.RevokeAPIKey(ctx, id); err != nil {
				t.Fatal(err)
			}
		}, "session ended"},
		{"session expired", "/api/v1/events", true, func(string, int64, string, string) {
			// The database's clock passes the session's idle timeout; the
			// stream itself does not keep the session alive.
			ce.clock.advance(store.SessionIdleTimeout + time.Minute)
		}, "session ended"},
	}
	for _, tc := range cases {
		key, keyID := newKey(tc.name)
		var st *sseClient
		var cookie, csrf string
		if tc.cookie {
			cookie, csrf = ce.consoleSession(key)
			st = ce.openEvents(tc.path, "", "Cookie", cookie)
		} else {
			st = ce.openEvents(tc.path, key)
		}
		wantStatus200(t, st)
		if ev, ok := st.next(); !ok || ev.comment {
			// The organization stream greets with the campaign's snapshot.
			t.Fatalf("%s: first event = %+v, want a snapshot", tc.name, ev)
		}
		tc.end(key, keyID, cookie, csrf)
		comments := waitEnd(t, st, tc.name)
		if len(comments) == 0 || comments[len(comments)-1] != tc.reason {
			t.Errorf("%s: comments before the end = %q, want %q last", tc.name, comments, tc.reason)
		}
		var again *sseClient
		if tc.cookie {
			again = ce.openEvents(tc.path, "", "Cookie", cookie)
		} else {
			again = ce.openEvents(tc.path, key)
		}
		if again.res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: reopening = %d, want 401", tc.name, again.res.StatusCode)
		}
		again.close()
	}
	for drained := false; !drained; {
		select {
		case _, ok := <-bystander.events:
			if !ok {
				t.Fatal("the bystander's stream ended with the others' credentials")
			}
		default:
			drained = true
		}
	}
}

func wantStatus200(t *testing.T, c *sseClient) {
	t.Helper()
	if c.res.StatusCode != http.StatusOK {
		t.Fatalf("stream = %d, want 200", c.res.StatusCode)
	}
}

// Open streams are bounded per key, per organization and in all (API.md 10,
// amended): one more is 429 naming the limit (503 with Retry-After for the
// service's own bound), HEAD answers as GET would and holds nothing, and a stream that ends gives
// its place back.
func TestEventStreamLimits(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true, limits: web.Limits{Streams: web.StreamLimits{PerKey: 2, PerOrg: 3, Total: 5}}})
	ctx := context.Background()
	second := func(org string) string {
		_, sec, err := ce.db.CreateAPIKey(ctx, org, "second", store.RoleAdmin)
		if err != nil {
			t.Fatal(err)
		}
		return sec.Reveal()
	}
	a2, b2 := second("org-a"), second("org-b")
	const path = "/api/v1/events"
	open := func(key string, want int, detail string) *sseClient {
		t.Helper()
		c := ce.openEvents(path, key)
		if c.res.StatusCode != want {
			t.Fatalf("stream %d, want %d", c.res.StatusCode, want)
		}
		if want != http.StatusOK {
			body, _ := io.ReadAll(c.res.Body)
			if !strings.Contains(string(body), `"detail"`) || !strings.Contains(string(body), detail) {
				t.Fatalf("refusal body %s, want a detail naming %q", body, detail)
			}
		}
		return c
	}
	first := open(ce.keyA, http.StatusOK, "")
	open(ce.keyA, http.StatusOK, "")
	if r := ce.do(http.MethodHead, path, ce.keyA, nil); r.Status != http.StatusTooManyRequests {
		t.Fatalf("HEAD at the key's limit = %d, want 429 as GET", r.Status)
	}
	open(ce.keyA, http.StatusTooManyRequests, "--max-streams-per-key")
	if r := ce.do(http.MethodHead, path, a2, nil); r.Status != http.StatusOK {
		t.Fatalf("HEAD below the limits = %d, want 200", r.Status)
	}
	open(a2, http.StatusOK, "")
	open(a2, http.StatusTooManyRequests, "--max-streams-per-org")
	open(ce.keyB, http.StatusOK, "")
	open(b2, http.StatusOK, "")
	full := open(ce.keyB, http.StatusServiceUnavailable, "--max-streams")
	if full.res.Header.Get("Retry-After") == "" {
		t.Error("503 at the service's bound without Retry-After")
	}
	// Ordinary requests are not streams: they go on.
	wantStatus(t, ce.a(http.MethodGet, campaignsPath, nil), http.StatusOK)

	first.close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := ce.openEvents(path, b2)
		if c.res.StatusCode == http.StatusOK {
			break
		}
		c.close()
		if time.Now().After(deadline) {
			t.Fatalf("a closed stream's place was not given back: %d", c.res.StatusCode)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
