package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web"
)

// engineOf is the "database" health reports for the store at location: a
// PostgreSQL URL or a SQLite file.
func engineOf(location string) string {
	if store.IsDatabaseURL(location) {
		return "postgres"
	}
	return "sqlite"
}

func TestHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(http.MethodGet, healthPath, "", nil)
	wantStatus(t, r, http.StatusOK)
	// No Config.Node: the dialer's default name.
	if want := map[string]any{"status": "ok", "version": testVersion, "node": "local", "database": engineOf(e.dbPath)}; !equalJSON(r.Body, want) {
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
	want := map[string]any{"status": "unavailable", "version": testVersion, "node": "local", "database": engineOf(e.dbPath)}
	if !equalJSON(r.Body, want) {
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

// TestHealthNode: the node name serve gives (--node-name) is the health
// check's "node", and "database" names the engine under the store (API.md
// 16), in a 200 and a 503 alike.
func TestHealthNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := openAPIValidated(t, web.New(web.Config{DB: e.db, Version: testVersion, Node: "app-2:8080"}))
	get := func(want int) map[string]any {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, healthPath, nil))
		if rec.Code != want {
			t.Fatalf("status = %d, want %d", rec.Code, want)
		}
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		return body
	}
	if body := get(http.StatusOK); body["node"] != "app-2:8080" || body["database"] != engineOf(e.dbPath) {
		t.Fatalf("body = %v, want node app-2:8080, database %s", body, engineOf(e.dbPath))
	}
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	if body := get(http.StatusServiceUnavailable); body["node"] != "app-2:8080" || body["database"] != engineOf(e.dbPath) {
		t.Fatalf("body = %v, want node app-2:8080, database %s", body, engineOf(e.dbPath))
	}
}
