package cmd_test

import (
	"crypto/tls"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/outdial/outdial/cmd"
)

// TestBinaryReloadsCertificateOnSIGHUP runs the real binary with
// --tls-cert and --tls-key and sends it real SIGHUPs: a new pair is served
// from then on without a restart (same process), and a pair that does not
// load leaves the last good one served and says why in the log.
func TestBinaryReloadsCertificateOnSIGHUP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped with -short")
	}
	bin := cmd.BuildBinary(t)
	dir := t.TempDir()
	ca := cmd.NewTestCA(t)
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	first := ca.Leaf(t, "localhost", "127.0.0.1")
	first.Write(t, certPath, keyPath)

	addr := freeAddr(t)
	logPath := filepath.Join(dir, "serve.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	proc := exec.Command(bin, "serve", "--data", filepath.Join(dir, "data"), "--addr", addr, "--http-addr", "",
		"--tls-cert", certPath, "--tls-key", keyPath, "--log-format", "text")
	proc.Env = serviceEnv("http://127.0.0.1:1")
	proc.Stdout, proc.Stderr = logFile, logFile
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- proc.Wait() }()
	t.Cleanup(func() {
		proc.Process.Kill()
		<-exited
	})
	logText := func() string {
		b, _ := os.ReadFile(logPath)
		return string(b)
	}
	// waitFor polls cond until it holds, the process exits, or 20 s pass.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			select {
			case err := <-exited:
				t.Fatalf("serve exited (%v) while waiting for %s:\n%s", err, what, logText())
			case <-time.After(10 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 20s:\n%s", what, logText())
			}
		}
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}}}
	waitFor("health over https", func() bool {
		res, err := client.Get("https://" + addr + "/api/v1/health")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	serial := func() string {
		chain, err := cmd.ServedCert(addr, "localhost", ca.Pool, 0)
		if err != nil {
			t.Fatalf("handshake: %v", err)
		}
		return chain[0].SerialNumber.String()
	}
	if got := serial(); got != first.Serial.String() {
		t.Fatalf("serial %s served, want the first pair's %s", got, first.Serial)
	}

	second := ca.Leaf(t, "localhost", "127.0.0.1")
	second.Write(t, certPath, keyPath)
	if err := proc.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor("the second certificate served", func() bool { return serial() == second.Serial.String() })

	os.WriteFile(certPath, []byte("-----BEGIN CERTIFICATE-----\ncut short"), 0o600)
	if err := proc.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor("the refused reload in the log", func() bool {
		return strings.Contains(logText(), "TLS certificate not reloaded: keeping the previous one")
	})
	if got := serial(); got != second.Serial.String() {
		t.Fatalf("serial %s served after a bad pair, want the last good one %s", got, second.Serial)
	}
	select {
	case err := <-exited:
		t.Fatalf("serve exited after SIGHUP: %v\n%s", err, logText())
	default:
	}
	// SIGTERM still stops it cleanly.
	if err := proc.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM:\n%s", err, logText())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop within 15s of SIGTERM")
	}
	exited <- nil // for the cleanup
}
