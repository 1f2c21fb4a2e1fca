package cmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// acmeTestDomain is the name the ACME test gets a certificate for: it has a
// dot (autocert refuses single labels) and needs no DNS, since pebble runs
// with PEBBLE_VA_ALWAYS_VALID.
const acmeTestDomain = "outdial.localhost"

// pebble is a running pebble (Debian's package: the RFC 8555 test server
// from Let's Encrypt) on loopback.
type pebble struct {
	dir       string // its directory URL
	mgmt      string // its management listener, https://host:port
	caPEMPath string // the CA of its own https listeners (--acme-ca-root)
	caPool    *x509.CertPool
	logs      *syncBuffer
}

// pebbleBinary returns pebble's path ($PEBBLE, else /usr/bin/pebble). The
// test skips without it, except when CI is set (.ci/run installs it with
// .ci/pebble.sh): then it fails.
func pebbleBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("PEBBLE")
	if bin == "" {
		bin = "/usr/bin/pebble"
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and pebble is missing (%v): .ci/pebble.sh installs it", err)
		}
		t.Skipf("pebble is not installed (%v): .ci/pebble.sh installs Debian's package", err)
	}
	return bin
}

// startPebble runs pebble on free loopback ports with a certificate of a
// CA made here for its own https listeners; challenges always validate and
// nothing sleeps or rejects nonces at random.
func startPebble(t *testing.T) *pebble {
	t.Helper()
	bin := pebbleBinary(t)
	dir := t.TempDir()
	ca := NewTestCA(t)
	leaf := ca.Leaf(t, "localhost", "127.0.0.1")
	leaf.Write(t, filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	p := &pebble{caPEMPath: WriteTestFile(t, dir, "ca.pem", ca.PEM), caPool: ca.Pool, logs: &syncBuffer{}}
	listen, mgmt := freeLoopback(t), freeLoopback(t)
	conf := map[string]any{"pebble": map[string]any{
		"listenAddress":                  listen,
		"managementListenAddress":        mgmt,
		"certificate":                    filepath.Join(dir, "cert.pem"),
		"privateKey":                     filepath.Join(dir, "key.pem"),
		"httpPort":                       portNumber(t, freeLoopback(t)),
		"tlsPort":                        portNumber(t, freeLoopback(t)),
		"ocspResponderURL":               "",
		"externalAccountBindingRequired": false,
	}}
	raw, _ := json.Marshal(conf)
	confPath := WriteTestFile(t, dir, "pebble.json", raw)
	cmd := exec.Command(bin, "-config", confPath)
	cmd.Env = append(os.Environ(), "PEBBLE_VA_ALWAYS_VALID=1", "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0")
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start pebble: %v", err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		wg.Wait()
	})
	p.dir, p.mgmt = "https://"+listen+"/dir", "https://"+mgmt
	client := p.client()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := client.Get(p.dir)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pebble's directory did not answer within 30s (%v):\n%s", err, p.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// client trusts the CA of pebble's own listeners.
func (p *pebble) client() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.caPool}}}
}

// issuingRoots returns the root pebble issues from (it makes a new one at
// every start), from its management listener.
func (p *pebble) issuingRoots(t *testing.T) *x509.CertPool {
	t.Helper()
	res, err := p.client().Get(p.mgmt + "/roots/0")
	if err != nil {
		t.Fatalf("pebble roots: %v", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	pool := x509.NewCertPool()
	if res.StatusCode != http.StatusOK || !pool.AppendCertsFromPEM(body) {
		t.Fatalf("pebble /roots/0: %d %s", res.StatusCode, body)
	}
	return pool
}

// orders returns how many orders pebble has received: one "Added order"
// line of its log each.
func (p *pebble) orders() int { return strings.Count(p.logs.String(), "Added order") }

// freeLoopback returns a free 127.0.0.1:port.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func portNumber(t *testing.T, addr string) int {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	var n int
	if _, err := fmt.Sscan(port, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestACMEAgainstPebble runs serve with --acme-domain against a real ACME
// server (pebble) on loopback: the certificate is obtained at start and
// served for the domain, chaining to pebble's issuing root; the public URL
// is https://outdial.localhost:port; the plain-HTTP listener answers the
// challenge path itself (404 for an unknown token, not a redirect) and
// redirects the rest; the cache is DATA/acme, mode 0700. A second start on
// the same data directory serves the same certificate from the cache and
// places no order with the CA.
func TestACMEAgainstPebble(t *testing.T) {
	clearEnv(t)
	pb := startPebble(t)
	data := filepath.Join(t.TempDir(), "data")
	args := func() []string {
		return []string{"--data", data, "--addr", freeLoopback(t), "--http-addr", freeLoopback(t),
			"--acme-domain", acmeTestDomain, "--acme-email", "ops@example.com",
			"--acme-directory", pb.dir, "--acme-ca-root", pb.caPEMPath}
	}
	// serveOnce starts serve, waits for its certificate, checks what it
	// serves, stops it and returns the certificate's serial.
	serveOnce := func(run string) string {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		addr, httpAddr, done, logs := startServeArgs(t, ctx, args()...)
		deadline := time.Now().Add(60 * time.Second)
		for !strings.Contains(logs.String(), `msg="ACME certificate ready"`) {
			if strings.Contains(logs.String(), "ACME certificate not obtained") || time.Now().After(deadline) {
				t.Fatalf("%s: no certificate:\n%s\npebble:\n%s", run, logs.String(), pb.logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		_, port, _ := net.SplitHostPort(addr)
		public := "https://" + acmeTestDomain + ":" + port
		if !strings.Contains(logs.String(), "public_url="+public+" ") {
			t.Errorf("%s: public URL is not %s:\n%s", run, public, logs.String())
		}
		chain, err := ServedCert(addr, acmeTestDomain, nil, 0)
		if err != nil {
			t.Fatalf("%s: handshake: %v", run, err)
		}
		if err := chainsTo(chain, acmeTestDomain, pb.issuingRoots(t)); err != nil {
			t.Fatalf("%s: the served certificate does not chain to pebble's root: %v", run, err)
		}
		if left := time.Until(chain[0].NotAfter); left < 31*24*time.Hour {
			t.Fatalf("%s: pebble's certificate has only %v left; the no-order check needs more than 30 days", run, left)
		}
		// The API over https with that certificate, as a provider would call it.
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pb.issuingRoots(t), ServerName: acmeTestDomain},
		}}
		res, err := client.Get("https://" + addr + "/api/v1/health")
		if err != nil {
			t.Fatalf("%s: health: %v", run, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("Strict-Transport-Security") == "" {
			t.Fatalf("%s: health %d, HSTS %q", run, res.StatusCode, res.Header.Get("Strict-Transport-Security"))
		}
		// The plain-HTTP listener: challenges are the manager's, the rest
		// is redirected.
		plain := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		req, _ := http.NewRequest(http.MethodGet, "http://"+httpAddr+"/.well-known/acme-challenge/unknown-token", nil)
		req.Host = acmeTestDomain
		res, err = plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Fatalf("%s: unknown challenge token: %d, want 404 from the challenge handler", run, res.StatusCode)
		}
		req, _ = http.NewRequest(http.MethodGet, "http://"+httpAddr+"/console/?a=1", nil)
		req.Host = acmeTestDomain
		if res, err = plain.Do(req); err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != public+"/console/?a=1" {
			t.Fatalf("%s: http: %d %q, want 308 to %s/console/?a=1", run, res.StatusCode, res.Header.Get("Location"), public)
		}
		cancel()
		waitDone(t, done)
		return chain[0].SerialNumber.String()
	}

	first := serveOnce("first start")
	ordersAfterFirst := pb.orders()
	if ordersAfterFirst != 1 {
		t.Fatalf("pebble received %d orders at the first start, want 1:\n%s", ordersAfterFirst, pb.logs.String())
	}
	checkMode(t, filepath.Join(data, acmeCacheDir), 0o700)
	entries, err := os.ReadDir(filepath.Join(data, acmeCacheDir))
	if err != nil || len(entries) < 2 {
		t.Fatalf("DATA/acme holds %v (%v), want the account key and the certificate", entries, err)
	}

	second := serveOnce("second start")
	if second != first {
		t.Fatalf("the second start served certificate %s, want the cached %s", second, first)
	}
	if n := pb.orders() - ordersAfterFirst; n != 0 {
		t.Fatalf("the second start placed %d orders, want 0 (the cached certificate has more than 30 days left)", n)
	}
}
