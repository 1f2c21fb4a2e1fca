package cmd

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// serveWithLogs runs `serve` on a free port in dir with the extra args and
// waits until its log (stderr) shows the address; want tells the listening
// line apart in the expected format. It returns the base URL, the log and
// the function that stops serve and waits for it.
func serveWithLogs(t *testing.T, dir string, want *regexp.Regexp, args ...string) (string, *syncBuffer, func()) {
	t.Helper()
	var errOut syncBuffer
	root := newRoot()
	root.SetArgs(append([]string{"serve", "--data", dir, "--addr", "127.0.0.1:0"}, args...))
	root.SetOut(io.Discard)
	root.SetErr(&errOut)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	stop := func() {
		cancel()
		waitDone(t, done)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := want.FindStringSubmatch(errOut.String()); m != nil {
			return "http://" + m[1], &errOut, stop
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("serve ended before listening: %v\n%s", err, errOut.String())
		case <-time.After(2 * time.Millisecond):
		}
	}
	cancel()
	t.Fatalf("serve did not listen within 10s:\n%s", errOut.String())
	return "", nil, nil
}

// TestServeLogFormat: off a terminal the logs are JSON by default, every
// line of them, with one request line per request (route pattern, status,
// duration_ms, org_id) and no API key; OUTDIAL_LOG_FORMAT=text switches to
// text; a bad format is refused.
func TestServeLogFormat(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	key := createKey(t, "--org", "acme", "--data", dir)

	base, logs, stop := serveWithLogs(t, dir, regexp.MustCompile(`"msg":"outdial listening","addr":"([^"]+)"`))
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/campaign/123", nil)
	req.Header.Set("X-API-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("status = %d, want %d", res.StatusCode, http.StatusNotFound)
	}
	stop()
	var found map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON (%v): %s", err, line)
		}
		if m["msg"] == "request" && m["route"] == "/api/v1/campaign/:campaign_id" {
			found = m
		}
	}
	if found == nil {
		t.Fatalf("no request line for /api/v1/campaign/:campaign_id:\n%s", logs.String())
	}
	if found["method"] != "GET" || found["status"] != float64(404) || found["org_id"] == nil || found["duration_ms"] == nil {
		t.Errorf("request line = %v, want method GET, status 404, org_id and duration_ms", found)
	}
	if strings.Contains(logs.String(), key) || strings.Contains(logs.String(), "/123") {
		t.Errorf("logs hold the API key or the raw path:\n%s", logs.String())
	}

	t.Setenv("OUTDIAL_LOG_FORMAT", "text")
	_, logs, stop = serveWithLogs(t, dir, regexp.MustCompile(`msg="outdial listening" addr=(\S+)`))
	stop()
	if strings.Contains(logs.String(), `{"time"`) {
		t.Errorf("OUTDIAL_LOG_FORMAT=text wrote JSON:\n%s", logs.String())
	}

	if _, _, err := run(t, "serve", "--data", dir, "--addr", "127.0.0.1:0", "--log-format", "xml"); err == nil || !strings.Contains(err.Error(), "log-format") {
		t.Errorf("--log-format xml: err = %v, want one naming --log-format", err)
	}
}
