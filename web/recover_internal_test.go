package web

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/julienschmidt/httprouter"
)

// TestPanicIsRecovered registers a handler that panics on a private server
// and checks the recovery: 500 {"detail":"Internal Server Error"}, one error
// log line naming the path, and the server keeps serving.
func TestPanicIsRecovered(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	s := New(Config{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	s.public(http.MethodGet, "/api/v1/test-panic", func(http.ResponseWriter, *http.Request, httprouter.Params) error {
		panic("boom")
	})
	srv := httptest.NewServer(s)
	defer srv.Close()
	for range 2 {
		res, err := http.Get(srv.URL + "/api/v1/test-panic")
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		body.ReadFrom(res.Body) //nolint:errcheck
		res.Body.Close()
		if res.StatusCode != http.StatusInternalServerError {
			t.Fatalf("status = %d, want %d", res.StatusCode, http.StatusInternalServerError)
		}
		if got := strings.TrimSpace(body.String()); got != `{"detail":"Internal Server Error"}` {
			t.Fatalf("body = %s", got)
		}
	}
	if n := strings.Count(logs.String(), "level=ERROR"); n != 2 {
		t.Fatalf("error lines = %d, want 2:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "/api/v1/test-panic") || !strings.Contains(logs.String(), "boom") {
		t.Fatalf("log = %s", logs.String())
	}
}
