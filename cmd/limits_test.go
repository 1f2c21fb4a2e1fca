package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/outdial/outdial/store/diskspace"
)

// holdBody opens a connection to base, sends a request head with a
// Content-Length and never the body, and returns how long the server took
// to close the connection (failing after wait).
func holdBody(t *testing.T, base, method, path, key string, wait time.Duration) time.Duration {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n", method, path)
	if key != "" {
		head += "X-API-Key: " + key + "\r\n"
	}
	if _, err := io.WriteString(c, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(wait))
	_, err = io.Copy(io.Discard, bufio.NewReader(c))
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("%s %s: connection still open after %v", method, path, wait)
	}
	return time.Since(start)
}

// TestServeBodyDeadlines runs the real serve with test-sized body limits
// set through the environment: a request whose body never arrives is cut
// one window after its head, on the API and on a provider webhook.
func TestServeBodyDeadlines(t *testing.T) {
	clearEnv(t)
	t.Setenv("OUTDIAL_BODY_RATE_WINDOW", "300ms")
	t.Setenv("OUTDIAL_BODY_MIN_RATE", "1000")
	t.Setenv("OUTDIAL_BODY_TIMEOUT", "1s")
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done, logs := startServe(t, ctx, dir)
	key := createKey(t, "--org", "acme", "--data", dir)

	for _, tc := range []struct{ path, key string }{
		{"/api/v1/workflow", key},
		{"/api/v1/telephony/twilio/status/1?t=x", ""},
	} {
		took := holdBody(t, base, http.MethodPost, tc.path, tc.key, 5*time.Second)
		if took < 250*time.Millisecond || took > 3*time.Second {
			t.Errorf("POST %s: closed after %v, want about the 300 ms window", tc.path, took)
		}
	}
	if status, _ := getJSON(t, base+"/api/v1/health", ""); status != http.StatusOK {
		t.Fatalf("health = %d", status)
	}
	cancel()
	waitDone(t, done)
	for _, want := range []string{"msg=limits", "body_rate_window=300ms", "body_min_rate=1000", "max_connections="} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestServeUploadSweep: serve sweeps uploads on its own; an upload never
// used is deleted once older than --upload-retention.
func TestServeUploadSweep(t *testing.T) {
	clearEnv(t)
	t.Setenv("OUTDIAL_UPLOAD_SWEEP_INTERVAL", "50ms")
	t.Setenv("OUTDIAL_UPLOAD_RETENTION", "200ms")
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done, logs := startServe(t, ctx, dir)
	key := createKey(t, "--org", "acme", "--data", dir)

	up := presignJSON(t, base, key, map[string]any{"file_name": "c.csv", "file_size": 26})
	req, _ := http.NewRequest(http.MethodPut, up["upload_url"].(string), strings.NewReader("phone_number\n+14155550100\n"))
	req.Header.Set("Content-Type", "text/csv")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("upload: %v %v", res, err)
	}
	res.Body.Close()
	if n := objectFiles(t, dir); n != 1 {
		t.Fatalf("%d object files after the upload, want 1", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for objectFiles(t, dir) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("upload not swept within 5 s:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	waitDone(t, done)
	if !strings.Contains(logs.String(), "uploads deleted") || !strings.Contains(logs.String(), "expired=1") {
		t.Errorf("no sweep log:\n%s", logs.String())
	}
}

// TestServeDiskReserve: a reserve larger than the disk refuses presigns
// and campaign creates with 507 naming the reserve.
func TestServeDiskReserve(t *testing.T) {
	clearEnv(t)
	t.Setenv("OUTDIAL_DISK_RESERVE_BYTES", fmt.Sprint(int64(1)<<60))
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done, _ := startServe(t, ctx, dir)
	key := createKey(t, "--org", "acme", "--data", dir)
	for _, path := range []string{"/api/v1/s3/presigned-upload-url", "/api/v1/campaign"} {
		body, _ := json.Marshal(map[string]any{"file_name": "c.csv", "file_size": 10})
		req, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
		req.Header.Set("X-API-Key", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		_ = json.NewDecoder(res.Body).Decode(&got)
		res.Body.Close()
		detail, _ := got["detail"].(string)
		if res.StatusCode != http.StatusInsufficientStorage || !strings.HasPrefix(detail, "insufficient storage: ") ||
			!strings.Contains(detail, "reserve") {
			t.Errorf("POST %s = %d %v, want 507 naming the reserve", path, res.StatusCode, got)
		}
	}
	cancel()
	waitDone(t, done)
}

func presignJSON(t *testing.T, base, key string, body map[string]any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/s3/presigned-upload-url", bytes.NewReader(b))
	req.Header.Set("X-API-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("presign: %d %v %v", res.StatusCode, out, err)
	}
	return out
}

// objectFiles counts the object files of the bundled store under dir.
func objectFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	_ = filepath.WalkDir(filepath.Join(dir, "objects"), func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

func TestDefaultMaxConns(t *testing.T) {
	for _, tc := range []struct {
		files uint64
		want  int
	}{
		{0, 512}, {20, 16}, {256, 128}, {1024, 512}, {2048, 1024}, {4096, 3072}, {20000, 18976}, {1 << 20, 32768},
		{^uint64(0), 32768}, // unlimited
	} {
		if got := defaultMaxConns(tc.files); got != tc.want {
			t.Errorf("defaultMaxConns(%d) = %d, want %d", tc.files, got, tc.want)
		}
	}
}

// Streams take at most a quarter of the connection cap by default, so that
// the rest stays for ordinary requests.
func TestDefaultMaxStreams(t *testing.T) {
	for _, tc := range []struct{ conns, want int }{{16, 4}, {3, 1}, {512, 128}, {18976, 4096}, {32768, 4096}} {
		if got := defaultMaxStreams(tc.conns); got != tc.want {
			t.Errorf("defaultMaxStreams(%d) = %d, want %d", tc.conns, got, tc.want)
		}
	}
}

func TestRaiseOpenFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RLIMIT_NOFILE semantics checked on Linux")
	}
	var before syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &before); err != nil {
		t.Fatal(err)
	}
	// Lower the soft limit, as a service manager may start us.
	low := before
	low.Cur = min(before.Max, 512)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &before) })
	soft, hard, err := raiseOpenFiles()
	if err != nil || soft != before.Max || hard != before.Max {
		t.Fatalf("raiseOpenFiles = %d, %d, %v; want %d, %d", soft, hard, err, before.Max, before.Max)
	}
	var now syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now)
	if now.Cur != now.Max {
		t.Fatalf("soft limit %d, hard %d", now.Cur, now.Max)
	}
}

// TestLimitFlags: --disk-reserve-bytes' automatic default is the smaller of
// 1 GiB and 5 % of the data filesystem; bad values are refused at start.
func TestLimitFlags(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	addLimitFlags(f)
	r, err := diskReserve(f, dir)
	if err != nil {
		t.Fatal(err)
	}
	u, err := diskspace.Statfs(dir)()
	if err == nil && r.Bytes() != diskspace.DefaultReserve(u.Total) {
		t.Fatalf("automatic reserve = %d, want %d of a %d-byte filesystem", r.Bytes(), diskspace.DefaultReserve(u.Total), u.Total)
	}
	_ = f.Set("disk-reserve-bytes", "0")
	if r, err := diskReserve(f, dir); r != nil || err != nil {
		t.Fatalf("reserve 0 = %v, %v; want none", r, err)
	}
	_ = f.Set("disk-reserve-bytes", "1099511627776000") // more than any disk here
	if check := objectSpaceCheck(f, dir, slog.New(slog.DiscardHandler)); check == nil || !diskspace.IsLowSpace(check(0)) {
		t.Fatal("the object store's space check does not refuse below the reserve")
	}

	data := filepath.Join(t.TempDir(), "data")
	for _, args := range [][]string{
		{"--disk-reserve-bytes", "-2"}, {"--max-connections", "-1"}, {"--body-timeout", "-1s"},
		{"--upload-quota-bytes", "-5"}, {"--idle-timeout", "0s"},
	} {
		_, _, err := run(t, append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0"}, args...)...)
		if err == nil {
			t.Errorf("serve %v started", args)
		}
	}
}
