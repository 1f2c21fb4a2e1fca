package realbin

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The proxy sends requests to its backends in turn and keeps the Host the
// client sent (the providers sign the URL they called); with no backend it
// answers 502.
func TestProxyRoundRobin(t *testing.T) {
	p := StartProxy()
	defer p.Close()
	res, err := http.Get(p.Base + "/x")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadGateway {
		t.Fatalf("status with no backend = %d, want %d", res.StatusCode, http.StatusBadGateway)
	}
	for _, name := range []string{"a", "b"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %s %s", name, r.Host, r.URL.Path)
		}))
		defer srv.Close()
		p.Add(strings.TrimPrefix(srv.URL, "http://"))
	}
	var got []string
	for range 4 {
		res, err := http.Get(p.Base + "/api/v1/health")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		got = append(got, string(b))
	}
	host := p.Addr
	want := []string{"a " + host + " /api/v1/health", "b " + host + " /api/v1/health", "a " + host + " /api/v1/health", "b " + host + " /api/v1/health"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("answers = %q, want %q", got, want)
	}
	if s := p.String(); !strings.Contains(s, "5 requests, 1 answered 502") {
		t.Fatalf("String() = %q, want 5 requests and 1 answered 502", s)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://outdial:s3cret@127.0.0.1:5432/db?sslmode=disable": "postgres://outdial:xxxxx@127.0.0.1:5432/db?sslmode=disable",
		"postgres://outdial@127.0.0.1:5432/db":                        "postgres://outdial@127.0.0.1:5432/db",
		"postgresql://u:p@w@host/db":                                  "postgresql://u:xxxxx@host/db",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// Since counts each backend's growth, and the whole of one that connected
// in between; a nil snapshot gives 0.
func TestBackendCPUSince(t *testing.T) {
	before := BackendCPU{1: time.Second, 2: 2 * time.Second}
	after := BackendCPU{1: 3 * time.Second, 3: 500 * time.Millisecond}
	if got, want := after.Since(before), 2500*time.Millisecond; got != want {
		t.Fatalf("Since = %v, want %v", got, want)
	}
	if got := BackendCPU(nil).Since(before); got != 0 {
		t.Fatalf("nil Since = %v, want 0", got)
	}
	if got := after.Since(nil); got != 0 {
		t.Fatalf("Since(nil) = %v, want 0", got)
	}
}
