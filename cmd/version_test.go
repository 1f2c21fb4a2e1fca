package cmd

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestVersionLine(t *testing.T) {
	info := func(settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{GoVersion: "go1.27.3", Settings: settings}, true
		}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "95f534a0123456789abcdef0123456789abcdef0"}
	tests := []struct {
		name string
		read func() (*debug.BuildInfo, bool)
		want string
	}{
		{"clean", info(rev, debug.BuildSetting{Key: "vcs.modified", Value: "false"}), "outdial dev (commit 95f534a01234, go1.27.3)"},
		{"dirty", info(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "outdial dev (commit 95f534a01234-dirty, go1.27.3)"},
		{"no vcs", info(), "outdial dev (commit unknown, go1.27.3)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionLine(tc.read); got != tc.want {
				t.Fatalf("versionLine = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestVersionBinary: a binary built with -buildvcs and a version set at
// link time prints one line with that version, the commit and the Go
// release, and /api/v1/health answers the same version.
func TestVersionBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	if err := exec.Command("git", "rev-parse", "--git-dir").Run(); err != nil {
		t.Skip("not a git checkout")
	}
	bin := t.TempDir() + "/outdial"
	build := exec.Command("go", "build", "-buildvcs=true", "-ldflags", "-X github.com/outdial/outdial/cmd.Version=v9.8.7", "-o", bin, ".")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^outdial v9\.8\.7 \(commit [0-9a-f]{12}(-dirty)?, go1\.[0-9.]+\)\n$`)
	if !re.Match(out) {
		t.Fatalf("version = %q, want %s", out, re)
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), string(head[:12])) {
		t.Fatalf("version %q does not name HEAD %s", out, head[:12])
	}

	// The same variable is health's version.
	dir := t.TempDir()
	serve := exec.Command(bin, "serve", "--data", dir, "--addr", "127.0.0.1:0", "--metrics-addr", "", "--log-format", "text")
	logs := &syncBuffer{}
	serve.Stderr = logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { serve.Process.Kill(); serve.Wait() }() //nolint:errcheck
	addrRe := regexp.MustCompile(`msg="outdial listening" addr=(\S+)`)
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if m := addrRe.FindStringSubmatch(logs.String()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatalf("serve did not listen:\n%s", logs.String())
	}
	res, err := http.Get("http://" + addr + "/api/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var h struct{ Version string }
	if err := json.NewDecoder(res.Body).Decode(&h); err != nil || h.Version != "v9.8.7" {
		t.Fatalf("health version = %q, %v; want v9.8.7", h.Version, err)
	}
}
