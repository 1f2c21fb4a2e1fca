package cmd

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
)

// upgradeFixture is a fixture's JSON (bench/upgradefixtures writes it).
type upgradeFixture struct {
	Commit        string                                  `json:"commit"`
	SchemaVersion int                                     `json:"schema_version"`
	SecretKey     string                                  `json:"secret_key"`
	Keys          map[string]string                       `json:"keys"`
	Secrets       map[string]map[string]map[string]string `json:"secrets"`
	Requests      []struct {
		Org    string          `json:"org"`
		Path   string          `json:"path"`
		Status int             `json:"status"`
		JSON   json.RawMessage `json:"json"`
		Text   string          `json:"text"`
	} `json:"requests"`
}

// TestUpgradeFixtures opens each database of cmd/testdata/upgrade, written
// by the real binary of an earlier schema version (bench/upgradefixtures),
// with today's serve: it migrates forward, every API key still
// authenticates, every GET the old binary answered answers the same status
// and the same values (fields may be added, none lost or changed; a CSV
// report may gain columns), and every configuration's secrets open with the
// OUTDIAL_SECRET_KEY they were sealed with.
// SQLite-specific: database files written by earlier versions.
func TestUpgradeFixtures(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "upgrade", "schema-*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	versions := map[int]bool{}
	for _, p := range paths {
		var fx upgradeFixture
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &fx); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		versions[fx.SchemaVersion] = true
		t.Run(filepath.Base(strings.TrimSuffix(p, ".json")), func(t *testing.T) {
			checkFixture(t, strings.TrimSuffix(p, ".json")+".db.gz", &fx)
		})
	}
	// The released versions until the first tag: 640eb18 (schema 3) and
	// e399618 (schema 11), and every schema version between them.
	for v := 3; v <= 11; v++ {
		if !versions[v] {
			t.Errorf("no fixture of schema version %d", v)
		}
	}
}

func checkFixture(t *testing.T, dbGz string, fx *upgradeFixture) {
	clearEnv(t)
	t.Setenv("OUTDIAL_SECRET_KEY", fx.SecretKey)
	t.Setenv("OUTDIAL_METRICS_ADDR", "")
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "outdial.db")
	gunzipTo(t, dbGz, dbPath)
	if v, err := store.SchemaVersion(context.Background(), dbPath); err != nil || v != fx.SchemaVersion {
		t.Fatalf("fixture schema version = %d, %v; want %d", v, err, fx.SchemaVersion)
	}
	ctx, cancel := context.WithCancel(context.Background())
	base, done, logs := startServe(t, ctx, dir)
	for _, r := range fx.Requests {
		req, _ := http.NewRequest(http.MethodGet, base+r.Path, nil)
		req.Header.Set("X-API-Key", fx.Keys[r.Org])
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != r.Status {
			t.Errorf("%s GET %s = %d, want %d: %s", r.Org, r.Path, res.StatusCode, r.Status, body)
			continue
		}
		var diffs []string
		if r.JSON != nil {
			var want, got any
			if err := json.Unmarshal(r.JSON, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Errorf("%s GET %s: not JSON: %v", r.Org, r.Path, err)
				continue
			}
			diffs = jsonKept(want, got, "")
		} else {
			diffs = csvKept(t, r.Text, string(body))
		}
		for _, d := range diffs {
			t.Errorf("%s GET %s: %s", r.Org, r.Path, d)
		}
	}
	cancel()
	waitDone(t, done)
	if t.Failed() {
		t.Logf("serve's log:\n%s", logs.String())
	}
	if v, _ := store.SchemaVersion(context.Background(), dbPath); v != store.SupportedSchemaVersion() {
		t.Fatalf("schema version after serve = %d, want %d", v, store.SupportedSchemaVersion())
	}
	checkSecrets(t, dbPath, fx)
}

// checkSecrets opens the migrated database with the fixture's key and
// compares each configuration's sensitive fields with what was sent.
func checkSecrets(t *testing.T, dbPath string, fx *upgradeFixture) {
	db, _, err := openStore(context.Background(), dbPath, filepath.Join(filepath.Dir(dbPath), "secret.key"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for org, configs := range fx.Secrets {
		p, err := db.Authenticate(context.Background(), fx.Keys[org])
		if err != nil {
			t.Fatalf("%s's key: %v", org, err)
		}
		list, err := db.ListTelephonyConfigs(context.Background(), p.OrganizationID)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, c := range list {
			want, ok := configs[c.Name]
			if !ok {
				continue
			}
			found++
			full, err := db.GetTelephonyConfig(context.Background(), p.OrganizationID, c.ID)
			if err != nil {
				t.Fatalf("%s %q: %v", org, c.Name, err)
			}
			for field, v := range want {
				if got := full.Credentials.String(field); got != v {
					t.Errorf("%s %q: %s does not open to what was sent", org, c.Name, field)
				}
			}
		}
		if found != len(configs) {
			t.Errorf("%s: %d of %d configurations found", org, found, len(configs))
		}
	}
}

// jsonKept returns how got loses or changes what want holds: every key of
// an object must be there with a kept value (got may have more keys);
// arrays keep their length and order; other values are equal.
func jsonKept(want, got any, at string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %v, want an object", at, got)}
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var diffs []string
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: lost", at, k))
				continue
			}
			diffs = append(diffs, jsonKept(w[k], gv, at+"."+k)...)
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: %d elements (%v), want %d", at, len(g), ok, len(w))}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, jsonKept(w[i], g[i], fmt.Sprintf("%s[%d]", at, i))...)
		}
		return diffs
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s = %v, want %v", at, got, want)}
	}
	return nil
}

// csvKept compares two CSV reports by column name: every column of want
// is in got with the same cells, row by row.
func csvKept(t *testing.T, want, got string) []string {
	w, err := csv.NewReader(strings.NewReader(want)).ReadAll()
	if err != nil {
		t.Fatalf("fixture report: %v", err)
	}
	g, err := csv.NewReader(strings.NewReader(got)).ReadAll()
	if err != nil {
		return []string{"report is not CSV: " + err.Error()}
	}
	if len(g) != len(w) {
		return []string{fmt.Sprintf("report has %d lines, want %d", len(g), len(w))}
	}
	col := map[string]int{}
	for i, name := range g[0] {
		col[name] = i
	}
	var diffs []string
	for i, name := range w[0] {
		j, ok := col[name]
		if !ok {
			diffs = append(diffs, "report lost column "+name)
			continue
		}
		for r := 1; r < len(w); r++ {
			if g[r][j] != w[r][i] {
				diffs = append(diffs, fmt.Sprintf("report row %d %s = %q, want %q", r, name, g[r][j], w[r][i]))
			}
		}
	}
	return diffs
}

// gunzipTo writes the gunzipped src to dst (mode 0600).
func gunzipTo(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
