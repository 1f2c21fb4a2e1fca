package metrics_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/outdial/outdial/dialer/metrics"
)

// knownNames returns every series name the registry exposes (histograms
// with their _bucket, _sum and _count).
func knownNames(t *testing.T) map[string]bool {
	t.Helper()
	m := metrics.New()
	m.WatchInFlight(func(yield func(int64, int)) { yield(1, 0) })
	m.WatchCampaigns(func(context.Context) (map[string]int64, error) { return map[string]int64{}, nil })
	m.Dispatched(0)
	m.AnswerToFirstAudio(0)
	m.ObserveBatch(0, 0, 1)
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range fams {
		n := f.GetName()
		names[n] = true
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			names[n+s] = true
		}
	}
	return names
}

var metricName = regexp.MustCompile(`\b(outdial|go|process)_[a-z_]+\b`)

// checkExpr fails when expr names a series the registry does not expose.
func checkExpr(t *testing.T, where, expr string, names map[string]bool) {
	t.Helper()
	for _, n := range metricName.FindAllString(expr, -1) {
		if !names[n] {
			t.Errorf("%s: %s names %s, which is not exposed", where, expr, n)
		}
	}
}

// TestAlertRules parses docs/prometheus-alerts.yml: every rule has a name,
// an expression on exposed metrics, a severity and a summary.
func TestAlertRules(t *testing.T) {
	b, err := os.ReadFile("../../docs/prometheus-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("prometheus-alerts.yml: %v", err)
	}
	names := knownNames(t)
	want := map[string]bool{"OutdialBreakerTripped": false, "OutdialProviderAuthFailures": false,
		"OutdialWebhooksForged": false, "OutdialCallsStuckInFlight": false}
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("rule %+v lacks its name, expr, severity or summary", r)
			}
			checkExpr(t, r.Alert, r.Expr, names)
			if _, ok := want[r.Alert]; ok {
				want[r.Alert] = true
			}
		}
	}
	for a, found := range want {
		if !found {
			t.Errorf("no rule %s", a)
		}
	}
}

// TestGrafanaDashboard parses docs/grafana-dashboard.json: every panel
// queries exposed metrics.
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile("../../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	if dash.Title == "" || len(dash.Panels) == 0 {
		t.Fatal("the dashboard has no title or no panels")
	}
	names := knownNames(t)
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			checkExpr(t, p.Title, q.Expr, names)
		}
	}
}
