package cmd

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startServeArgs runs `serve` in process with args (text logs) and waits
// until it listens; it returns the https or http listener's address, the
// plain-HTTP listener's address with TLS on ("" otherwise), the command's
// result channel and its log.
func startServeArgs(t *testing.T, ctx context.Context, args ...string) (addr, httpAddr string, done <-chan error, logs *syncBuffer) {
	t.Helper()
	var out, errOut syncBuffer
	root := newRoot()
	root.SetArgs(append([]string{"serve", "--log-format", "text"}, args...))
	root.SetOut(&out)
	root.SetErr(&errOut)
	ch := make(chan error, 1)
	go func() { ch <- root.ExecuteContext(ctx) }()
	addrRe := regexp.MustCompile(`msg="outdial listening" addr=(\S+)`)
	httpRe := regexp.MustCompile(`msg="outdial http listening" addr=(\S+)`)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m := addrRe.FindStringSubmatch(errOut.String()); m != nil {
			if h := httpRe.FindStringSubmatch(errOut.String()); h != nil {
				return m[1], h[1], ch, &errOut
			}
			if !strings.Contains(errOut.String(), "tls=true") {
				return m[1], "", ch, &errOut
			}
		}
		select {
		case err := <-ch:
			t.Fatalf("serve ended before listening: %v\n%s", err, errOut.String())
		case <-time.After(2 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not listen within 20s:\n%s", errOut.String())
	return "", "", nil, nil
}

// tlsFlags parses serve's flags from args and returns its TLS setup.
func tlsFlags(t *testing.T, dataDir string, log *slog.Logger, args ...string) (*tlsSetup, error) {
	t.Helper()
	c := newServe()
	if err := c.Flags().Parse(args); err != nil {
		t.Fatal(err)
	}
	return newTLSSetup(c.Flags(), dataDir, log)
}

// TestTLSFlagsRefused: incomplete or contradictory TLS flags, ACME names
// without a dot and an http public URL with TLS on stop serve before it
// listens, with an error naming the flag; env variables count as flags.
func TestTLSFlagsRefused(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	ca := NewTestCA(t)
	leaf := ca.Leaf(t, "localhost", "127.0.0.1")
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	leaf.Write(t, certPath, keyPath)
	garbage := WriteTestFile(t, dir, "garbage.pem", []byte("not a certificate"))
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"cert without key", nil, []string{"--tls-cert", certPath}, "--tls-cert and --tls-key go together"},
		{"key without cert", nil, []string{"--tls-key", keyPath}, "--tls-cert and --tls-key go together"},
		{"cert and acme", nil, []string{"--tls-cert", certPath, "--tls-key", keyPath, "--acme-domain", "outdial.example.com"}, "exclude each other"},
		{"cert that does not load", nil, []string{"--tls-cert", garbage, "--tls-key", keyPath}, "--tls-cert " + garbage},
		{"key of another cert", nil, []string{"--tls-cert", certPath, "--tls-key", WriteTestFile(t, dir, "other.key", ca.Leaf(t, "x.example").KeyPEM)}, "private key does not match public key"},
		{"single-label domain", nil, []string{"--acme-domain", "outdial"}, `--acme-domain "outdial": a certificate needs a DNS name with at least one dot`},
		{"single-label domain from env", map[string]string{"OUTDIAL_ACME_DOMAIN": "outdial.example.com,localhost"}, nil, `--acme-domain "localhost": a certificate needs a DNS name with at least one dot`},
		{"wildcard", nil, []string{"--acme-domain", "*.example.com"}, "not a DNS name"},
		{"url", nil, []string{"--acme-domain", "https://outdial.example.com"}, "not a DNS name"},
		{"email without domain", nil, []string{"--acme-email", "ops@example.com"}, "--acme-email needs --acme-domain"},
		{"ca root without domain", map[string]string{"OUTDIAL_ACME_CA_ROOT": certPath}, nil, "--acme-ca-root needs --acme-domain"},
		{"http directory", nil, []string{"--acme-domain", "outdial.example.com", "--acme-directory", "http://127.0.0.1:1/dir"}, "--acme-directory must be an https URL"},
		{"ca root that is no PEM", nil, []string{"--acme-domain", "outdial.example.com", "--acme-ca-root", garbage}, "no PEM certificate"},
		{"http public url", nil, []string{"--tls-cert", certPath, "--tls-key", keyPath, "--public-url", "http://outdial.example.com"}, "--public-url must be an https URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			args := append([]string{"serve", "--data", filepath.Join(t.TempDir(), "data"), "--addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"}, tc.args...)
			_, _, err := run(t, args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("serve %v: error %v, want one containing %q", tc.args, err, tc.want)
			}
		})
	}
}

// TestDefaultPublicURLWithTLS: https:// and the first ACME domain, else the
// listen address's host (localhost when empty or unspecified), with :port
// unless it is 443.
func TestDefaultPublicURLWithTLS(t *testing.T) {
	cases := []struct {
		domains []string
		addr    string
		want    string
	}{
		{[]string{"outdial.example.com", "b.example.com"}, "[::]:443", "https://outdial.example.com"},
		{[]string{"outdial.example.com"}, "0.0.0.0:8443", "https://outdial.example.com:8443"},
		{nil, "[::]:443", "https://localhost"},
		{nil, "0.0.0.0:8443", "https://localhost:8443"},
		{nil, ":8443", "https://localhost:8443"},
		{nil, "127.0.0.1:443", "https://127.0.0.1"},
		{nil, "10.0.0.5:8443", "https://10.0.0.5:8443"},
		{nil, "[2001:db8::1]:443", "https://[2001:db8::1]"},
		{nil, "[2001:db8::1]:8443", "https://[2001:db8::1]:8443"},
	}
	for _, tc := range cases {
		got := (&tlsSetup{domains: tc.domains}).defaultPublicURL(tc.addr)
		if got != tc.want {
			t.Errorf("domains %v, addr %s: public URL %q, want %q", tc.domains, tc.addr, got, tc.want)
		}
	}
}

// TestCertReload: the https listener serves the certificate of --tls-cert
// and --tls-key; tlsSetup.reload (what serve's SIGHUP handler calls) serves
// a new pair from the next handshake on; a pair that does not load (a
// half-written file, a key of another certificate) is refused with a logged
// reason and the previous pair stays. TLS below 1.2 is refused.
func TestCertReload(t *testing.T) {
	dir := t.TempDir()
	ca := NewTestCA(t)
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	first := ca.Leaf(t, "localhost", "127.0.0.1")
	first.Write(t, certPath, keyPath)
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	set, err := tlsFlags(t, dir, log, "--tls-cert", certPath, "--tls-key", keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if got := set.config().MinVersion; got != tls.VersionTLS12 {
		t.Fatalf("MinVersion = %#x, want TLS 1.2", got)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.NotFoundHandler(), TLSConfig: set.config(), ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()

	served := func(what string) string {
		t.Helper()
		chain, err := ServedCert(addr, "localhost", ca.Pool, 0)
		if err != nil {
			t.Fatalf("%s: handshake: %v", what, err)
		}
		return chain[0].SerialNumber.String()
	}
	if got := served("first pair"); got != first.Serial.String() {
		t.Fatalf("serial %s served, want the first pair's %s", got, first.Serial)
	}

	// A renewal written in two steps: the new certificate first, the key
	// still the old one's. A reload in between keeps the old pair.
	second := ca.Leaf(t, "localhost", "127.0.0.1")
	writeFile(t, certPath, second.CertPEM)
	if err := set.reload(log); err == nil || !strings.Contains(err.Error(), "private key does not match") {
		t.Fatalf("reload of a mismatched pair: %v, want a refusal", err)
	}
	if got := served("after a mismatched pair"); got != first.Serial.String() {
		t.Fatalf("serial %s served after a refused reload, want the first pair's %s", got, first.Serial)
	}
	if !strings.Contains(logs.String(), "TLS certificate not reloaded: keeping the previous one") {
		t.Fatalf("the refused reload was not logged:\n%s", logs.String())
	}
	// A file cut short.
	writeFile(t, keyPath, second.KeyPEM[:len(second.KeyPEM)/2])
	if err := set.reload(log); err == nil {
		t.Fatal("reload of a truncated key succeeded")
	}
	if got := served("after a truncated key"); got != first.Serial.String() {
		t.Fatalf("serial %s served after a refused reload, want the first pair's %s", got, first.Serial)
	}
	// The whole new pair.
	writeFile(t, keyPath, second.KeyPEM)
	if err := set.reload(log); err != nil {
		t.Fatalf("reload of the new pair: %v", err)
	}
	if got := served("second pair"); got != second.Serial.String() {
		t.Fatalf("serial %s served after the reload, want the second pair's %s", got, second.Serial)
	}
	if !strings.Contains(logs.String(), `msg="TLS certificate reloaded"`) {
		t.Fatalf("the reload was not logged:\n%s", logs.String())
	}

	// TLS 1.1 is refused; the client can speak it (a server that allows it
	// completes the handshake), so the refusal is the service's.
	if _, err := ServedCert(addr, "localhost", ca.Pool, tls.VersionTLS11); err == nil {
		t.Fatal("a TLS 1.1 handshake succeeded")
	}
	old := &http.Server{Handler: http.NotFoundHandler(), TLSConfig: &tls.Config{MinVersion: tls.VersionTLS10, GetCertificate: set.files.getCertificate},
		ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)}
	oldLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go old.ServeTLS(oldLn, "", "")
	t.Cleanup(func() { old.Close() })
	if _, err := ServedCert(oldLn.Addr().String(), "localhost", ca.Pool, tls.VersionTLS11); err != nil {
		t.Fatalf("control: the test client cannot speak TLS 1.1 at all: %v", err)
	}
}

// TestReloadWithoutCertFiles: SIGHUP without --tls-cert only logs.
func TestReloadWithoutCertFiles(t *testing.T) {
	var logs bytes.Buffer
	var none *tlsSetup
	if err := none.reload(slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "nothing to reload") {
		t.Fatalf("log %q", logs.String())
	}
}

// TestServeTLS runs serve with --tls-cert and --tls-key: health over https
// with the certificate given, HSTS, TLS 1.1 refused, the default public URL
// https://127.0.0.1:port, and the plain-HTTP listener answering 308 to the
// same path and query at it, for a POST too.
func TestServeTLS(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	ca := NewTestCA(t)
	leaf := ca.Leaf(t, "localhost", "127.0.0.1")
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	leaf.Write(t, certPath, keyPath)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, httpAddr, done, logs := startServeArgs(t, ctx, "--data", filepath.Join(dir, "data"), "--addr", "127.0.0.1:0",
		"--http-addr", "127.0.0.1:0", "--tls-cert", certPath, "--tls-key", keyPath)
	base := "https://" + addr
	if !strings.Contains(logs.String(), "public_url="+base+" ") {
		t.Errorf("public URL is not %s:\n%s", base, logs.String())
	}

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(base + "/api/v1/health")
	if err != nil {
		t.Fatalf("health over https: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Strict-Transport-Security") != "max-age=31536000" {
		t.Fatalf("health: status %d, HSTS %q", res.StatusCode, res.Header.Get("Strict-Transport-Security"))
	}
	if res.TLS == nil || res.TLS.PeerCertificates[0].SerialNumber.Cmp(leaf.Serial) != 0 {
		t.Fatal("health was not served with --tls-cert's certificate")
	}
	if _, err := ServedCert(addr, "localhost", ca.Pool, tls.VersionTLS11); err == nil {
		t.Fatal("serve accepted a TLS 1.1 handshake")
	}
	// Plain http on the https port is not served.
	if res, err := http.Get("http://" + addr + "/api/v1/health"); err == nil {
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			t.Fatal("the https listener answered plain http with 200")
		}
	}

	for _, method := range []string{http.MethodGet, http.MethodPost} {
		req, _ := http.NewRequest(method, "http://"+httpAddr+"/api/v1/campaign?limit=5&x=%2F", strings.NewReader("{}"))
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if want := base + "/api/v1/campaign?limit=5&x=%2F"; res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != want {
			t.Fatalf("%s over http: %d Location %q, want 308 to %s", method, res.StatusCode, res.Header.Get("Location"), want)
		}
	}
	cancel()
	waitDone(t, done)
}

// chainsTo reports whether chain (leaf first, as served) verifies for name
// against roots, the rest of chain as intermediates.
func chainsTo(chain []*x509.Certificate, name string, roots *x509.CertPool) error {
	if len(chain) == 0 {
		return errors.New("no certificate served")
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{DNSName: name, Roots: roots, Intermediates: inter})
	return err
}
