package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/outdial/outdial/web"
)

func TestHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(http.MethodGet, healthPath, "", nil)
	wantStatus(t, r, http.StatusOK)
	if want := map[string]any{"status": "ok", "version": testVersion}; !equalJSON(r.Body, want) {
		t.Fatalf("body = %s, want %v", r.Raw, want)
	}
	// Only GET.
	r = e.do(http.MethodPost, healthPath, "", map[string]any{})
	wantDetail(t, r, http.StatusMethodNotAllowed, "Method Not Allowed")
}

func TestHealthDatabaseClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	r := e.do(http.MethodGet, healthPath, "", nil)
	wantStatus(t, r, http.StatusServiceUnavailable)
	if want := map[string]any{"status": "unavailable", "version": testVersion}; !equalJSON(r.Body, want) {
		t.Fatalf("body = %s, want %v", r.Raw, want)
	}
}

// TestHealthDefaultVersion checks that a server built without a version
// reports "dev".
func TestHealthDefaultVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := httptest.NewRecorder()
	web.New(web.Config{DB: e.db}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, healthPath, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, want %d", rec.Code, http.StatusOK)
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body["version"] != "dev" || body["status"] != "ok" {
		t.Fatalf("body = %v, want status ok, version dev", body)
	}
}
