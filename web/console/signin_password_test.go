package console_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/console"
)

func TestPasswordSignIn(t *testing.T) {
	e := newEnv(t)
	u := e.newUser("ada@example.com", store.RoleOperator, goodPassword)
	b := e.browser()
	page := b.get("/console/sign-in")
	wantStatus(t, "sign-in page", page, http.StatusOK)
	for _, field := range []string{`name="email"`, `name="password"`, `name="api_key"`} {
		if !strings.Contains(page.body, field) {
			t.Errorf("the sign-in page has no field %s", field)
		}
	}
	a := b.signInPassword(" ADA@example.com ", u.password, "/console/campaigns?x=1")
	wantStatus(t, "sign in", a, http.StatusSeeOther)
	if got := a.header.Get("Location"); got != "/console/campaigns?x=1" {
		t.Fatalf("Location = %q, want the page asked for", got)
	}
	s, err := e.db.Session(context.Background(), b.cookie())
	if err != nil {
		t.Fatal(err)
	}
	if s.UserID != u.ID || s.Role != store.RoleOperator || s.SecondFactorPending {
		t.Fatalf("session = user %d role %s pending %v, want user %d operator, not pending", s.UserID, s.Role, s.SecondFactorPending, u.ID)
	}
	wantStatus(t, "campaigns", b.get("/console/campaigns"), http.StatusOK)
	if n, _ := e.failures(u.Email); n != 0 {
		t.Errorf("%d failures recorded for a good sign-in", n)
	}
}

// Every failed password sign-in gets the same status and page, after one
// argon2id check (a dummy one when there is no hash), and counts.
func TestPasswordSignInFailuresLookAlike(t *testing.T) {
	e := newEnv(t)
	e.newUser("ada@example.com", store.RoleAdmin, goodPassword)
	off := e.newUser("off@example.com", store.RoleAdmin, goodPassword)
	if _, _, err := e.db.UpdateUser(context.Background(), off.OrganizationID, off.ID, nil, ptr(true)); err != nil {
		t.Fatal(err)
	}
	e.newUser("new@example.com", store.RoleAdmin, "")
	cases := []struct {
		name, email, password string
		real, dummy           int64
	}{
		{"unknown email", "nobody@example.com", goodPassword, 0, 1},
		{"wrong password", "ada@example.com", otherPassword, 1, 0},
		{"disabled user, right password", "off@example.com", goodPassword, 1, 0},
		{"no password set yet", "new@example.com", goodPassword, 0, 1},
	}
	var first string
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checks := console.CountPasswordChecks(t)
			b := e.browser()
			a := b.signInPassword(tc.email, tc.password, "/console/")
			wantStatus(t, "sign in", a, http.StatusUnprocessableEntity)
			if b.cookie() != "" {
				t.Fatal("a failed sign-in set a session cookie")
			}
			if !strings.Contains(a.body, "do not match an account") {
				t.Fatalf("the page does not say the sign-in failed: %s", a.body)
			}
			if strings.Contains(a.body, tc.password) {
				t.Fatal("the page echoes the password")
			}
			// The same page, but for the email typed (kept in its field).
			body := strings.ReplaceAll(a.body, tc.email, "EMAIL")
			if first == "" {
				first = body
			} else if body != first {
				t.Errorf("the page differs from the first case's:\n%s\nwant\n%s", body, first)
			}
			if real, dummy := checks(); real != tc.real || dummy != tc.dummy {
				t.Errorf("argon2id checks: %d real, %d dummy; want %d, %d (one check per attempt)", real, dummy, tc.real, tc.dummy)
			}
			if n, _ := e.failures(tc.email); n != 1 {
				t.Errorf("failures of %s = %d, want 1", tc.email, n)
			}
		})
	}
}

// Ten failures for an email in 15 minutes: the 11th attempt is 429 with
// Retry-After until the oldest is 15 minutes old, whatever the password,
// and 429 answers do not count; once it has aged out, signing in works.
func TestPasswordSignInThrottlePerEmail(t *testing.T) {
	e := newEnv(t)
	u := e.newUser("ada@example.com", store.RoleAdmin, goodPassword)
	b := e.browser()
	for i := range 10 {
		wantStatus(t, "wrong password "+strconv.Itoa(i), b.signInPassword(u.Email, otherPassword, ""), http.StatusUnprocessableEntity)
		e.clock.advance(time.Minute)
	}
	// The oldest failure is 10 minutes old: 5 minutes to go.
	e.clock.advance(30 * time.Second)
	for i, pw := range []string{goodPassword, otherPassword, goodPassword} {
		a := b.signInPassword(u.Email, pw, "")
		wantStatus(t, "attempt "+strconv.Itoa(11+i), a, http.StatusTooManyRequests)
		if got, want := a.header.Get("Retry-After"), strconv.Itoa(int((4*time.Minute + 30*time.Second).Seconds())); got != want {
			t.Errorf("Retry-After = %q, want %q", got, want)
		}
		if !strings.Contains(a.body, "Too many failed attempts") || b.cookie() != "" {
			t.Fatalf("the 429 page does not say so, or signed in: %s", a.body)
		}
	}
	if n, _ := e.failures(u.Email); n != 10 {
		t.Fatalf("failures = %d after three 429 answers, want 10 (429s do not count)", n)
	}
	e.clock.advance(4*time.Minute + 29*time.Second)
	wantStatus(t, "a second before Retry-After", b.signInPassword(u.Email, goodPassword, ""), http.StatusTooManyRequests)
	e.clock.advance(time.Second)
	wantStatus(t, "at Retry-After", b.signInPassword(u.Email, goodPassword, ""), http.StatusSeeOther)

	// Another email from another address is not limited meanwhile.
	f := newEnv(t)
	v := f.newUser("bob@example.com", store.RoleAdmin, goodPassword)
	wantStatus(t, "another env", f.browser().signInPassword(v.Email, goodPassword, ""), http.StatusSeeOther)
}

// Ten failures from one address, over any emails, limit every email from
// it.
func TestPasswordSignInThrottlePerAddress(t *testing.T) {
	e := newEnv(t)
	u := e.newUser("ada@example.com", store.RoleAdmin, goodPassword)
	b := e.browser()
	for i := range 10 {
		wantStatus(t, "unknown "+strconv.Itoa(i), b.signInPassword("guess"+strconv.Itoa(i)+"@example.com", goodPassword, ""), http.StatusUnprocessableEntity)
	}
	a := b.signInPassword(u.Email, goodPassword, "")
	wantStatus(t, "a good password from the address", a, http.StatusTooManyRequests)
	if got := a.header.Get("Retry-After"); got != strconv.Itoa(int((15 * time.Minute).Seconds())) {
		t.Errorf("Retry-After = %q, want 900", got)
	}
	if byEmail, byAddress := e.failures(u.Email); byEmail != 0 || byAddress != 10 {
		t.Errorf("failures = %d for the email, %d for the address; want 0, 10", byEmail, byAddress)
	}
}

func ptr[T any](v T) *T { return &v }
