package cmd_test

import (
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/outdial/outdial/cmd"
)

// TestMetricsListener runs the real binary with OUTDIAL_METRICS_ADDR on a
// free port: /metrics (Prometheus text) and /debug/pprof/ answer 200 there,
// and the API listener serves neither.
func TestMetricsListener(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped with -short")
	}
	bin := cmd.BuildBinary(t)
	addr, metricsAddr := freeAddr(t), freeAddr(t)
	env := append(serviceEnv("http://127.0.0.1:1"), "OUTDIAL_METRICS_ADDR="+metricsAddr)
	s := startService(t, bin, t.TempDir(), addr, env, "metrics")
	get := func(url string) (int, string) {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	status, body := get("http://" + metricsAddr + "/metrics")
	if status != http.StatusOK {
		t.Fatalf("GET /metrics status = %d, want %d", status, http.StatusOK)
	}
	for _, want := range []string{"# HELP outdial_calls_placed_total", "outdial_campaigns{state=\"running\"} 0",
		"outdial_provider_requests_total{provider=\"twilio\",status_class=\"2xx\"} 0", "go_goroutines", "process_cpu_seconds_total"} {
		if !strings.Contains(body, want) {
			t.Fatalf("/metrics lacks %q:\n%s", want, body)
		}
	}
	if status, _ := get("http://" + metricsAddr + "/debug/pprof/"); status != http.StatusOK {
		t.Fatalf("GET /debug/pprof/ status = %d, want %d", status, http.StatusOK)
	}
	if status, _ := get("http://" + metricsAddr + "/debug/pprof/goroutine?debug=1"); status != http.StatusOK {
		t.Fatalf("GET /debug/pprof/goroutine status = %d, want %d", status, http.StatusOK)
	}
	for _, path := range []string{"/metrics", "/debug/pprof/"} {
		if status, _ := get("http://" + addr + path); status != http.StatusNotFound {
			t.Fatalf("API listener GET %s status = %d, want %d", path, status, http.StatusNotFound)
		}
	}
	s.stop(t)
}

// TestMetricsAddrTaken: an address given explicitly that cannot be listened
// on stops serve with an error naming the flag.
func TestMetricsAddrTaken(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped with -short")
	}
	bin := cmd.BuildBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cmd := exec.Command(bin, "serve", "--data", t.TempDir(), "--addr", freeAddr(t), "--metrics-addr", ln.Addr().String())
	cmd.Env = serviceEnv("http://127.0.0.1:1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--metrics-addr") {
		t.Fatalf("serve with a taken --metrics-addr: %v, want an error naming --metrics-addr:\n%s", err, out)
	}
}
