package carrier

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/arisim"
)

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// runEvents builds an ARI carrier from creds with fast timing and runs its
// Events until the test ends.
func runEvents(t *testing.T, creds map[string]any) *ari {
	t.Helper()
	c, err := New(ARI, creds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := c.(*ari)
	a.timing = ariTestTiming()
	a.timing.eventsWait = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Events(ctx, newARITestSink())
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return a
}

// Issue 20 item 4: a call put off because the events websocket cannot be
// made says so, Unavailable (not RateLimited: Asterisk answered no 429),
// naming the endpoint's host:port and the cause, never a credential.
func TestARIEventsUnavailableSaysWhy(t *testing.T) {
	addr := closedPort(t)
	sim := arisim.Start(arisim.Config{})
	defer sim.Close()
	sim.RefuseEvents(true)
	simHost := strings.TrimPrefix(sim.URL(), "http://")
	for _, tt := range []struct {
		name, endpoint, password, want string
	}{
		{"closed port", "http://probe:hunter2@" + addr, "s3cret-password",
			"the events websocket connection to Asterisk at " + addr + " cannot be made (connection refused)"},
		{"handshake refused", sim.URL(), sim.Password(),
			"the events websocket connection to Asterisk at " + simHost + " cannot be made (Asterisk answered 503 (Service Unavailable) to the websocket handshake)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			creds := sim.Credentials()
			creds["ari_endpoint"] = tt.endpoint
			creds["app_password"] = tt.password
			a := runEvents(t, creds)
			for _, shown := range []string{a.String(), a.GoString()} {
				if strings.Contains(shown, "hunter2") || strings.Contains(shown, "probe") {
					t.Errorf("the carrier prints the endpoint's user info: %s", shown)
				}
			}
			_, err := a.Place(context.Background(), Call{AttemptID: 7, To: "+14155550101", From: "+14155550100"})
			var perr *Error
			if !errors.As(err, &perr) || perr.Kind != Unavailable {
				t.Fatalf("Place = %v, want an Unavailable *Error", err)
			}
			if perr.Message != tt.want || perr.RetryAfter != a.timing.eventsRetry || perr.HTTPStatus != 0 {
				t.Errorf("Unavailable %q (retry %v, http %d), want %q (retry %v, no HTTP answer)",
					perr.Message, perr.RetryAfter, perr.HTTPStatus, tt.want, a.timing.eventsRetry)
			}
			for _, secret := range []string{"hunter2", "probe", "s3cret-password"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error names %q: %v", secret, err)
				}
			}
		})
	}
}

// TestARIEventsCause: how a failed attempt to open the events websocket
// is worded.
func TestARIEventsCause(t *testing.T) {
	for _, tt := range []struct {
		err    error
		status int
		want   string
	}{
		{errors.New("failed to WebSocket dial: expected handshake response status code 101 but got 404"), http.StatusNotFound,
			"Asterisk answered 404 (Not Found) to the websocket handshake"},
		{&net.OpError{Op: "dial", Err: &net.DNSError{Name: "pbx", IsNotFound: true}}, 0, "the host name does not resolve"},
		{context.DeadlineExceeded, 0, "timed out"},
		{errors.New("something odd"), 0, "the connection failed"},
	} {
		if got := ariEventsCause(tt.err, tt.status); got != tt.want {
			t.Errorf("ariEventsCause(%v, %d) = %q, want %q", tt.err, tt.status, got, tt.want)
		}
	}
}
