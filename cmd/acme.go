package cmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
	"golang.org/x/net/idna"
)

// acmeDefaultDirectory is --acme-directory's default: Let's Encrypt's
// production directory.
const acmeDefaultDirectory = acme.LetsEncryptURL

// acmeCacheDir is the directory under DATA that holds the ACME account key
// and the certificates (autocert.DirCache, mode 0700).
const acmeCacheDir = "acme"

// newACMEManager builds the autocert manager of --acme-domain: it accepts
// the CA's terms (running with --acme-domain is the operator's consent),
// obtains certificates only for those names, keeps the account key and the
// certificates in DATA/acme and talks to --acme-directory, trusting the
// system's roots plus those of --acme-ca-root.
//
// Renewal: RenewBefore is left at autocert's default, which renews at the
// lesser of 30 days before expiry and a third of the certificate's
// lifetime (autocert caps any RenewBefore at 30 days). A restart finds the
// certificate in the cache and places no order while it has more than 30
// days left (cmd/acme_test.go checks this against pebble); a certificate
// shorter-lived than 90 days is renewed at a third of its life left.
func newACMEManager(f *pflag.FlagSet, domains []string, dataDir string) (*autocert.Manager, []string, error) {
	names, err := acmeDomains(domains)
	if err != nil {
		return nil, nil, err
	}
	email, _ := f.GetString("acme-email")
	directory, _ := f.GetString("acme-directory")
	caRoot, _ := f.GetString("acme-ca-root")
	if !strings.HasPrefix(directory, "https://") {
		return nil, nil, fmt.Errorf("--acme-directory must be an https URL, got %q", directory)
	}
	client, err := acmeHTTPClient(caRoot)
	if err != nil {
		return nil, nil, err
	}
	cache := filepath.Join(dataDir, acmeCacheDir)
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return nil, nil, fmt.Errorf("ACME cache: %w", err)
	}
	m := &autocert.Manager{
		Prompt:     autocert.AcceptTOS,
		Cache:      autocert.DirCache(cache),
		HostPolicy: autocert.HostWhitelist(names...),
		Email:      email,
		Client:     &acme.Client{DirectoryURL: directory, HTTPClient: client, UserAgent: "outdial/" + Version},
	}
	return m, names, nil
}

// acmeDomains normalises --acme-domain (lower case, no trailing dot, IDNs
// as punycode) and refuses what no CA issues for: names without a dot,
// wildcards, ports, URLs.
func acmeDomains(domains []string) ([]string, error) {
	names := make([]string, 0, len(domains))
	for _, d := range domains {
		name := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
		if name == "" {
			return nil, fmt.Errorf("--acme-domain: an empty name in %q", strings.Join(domains, ","))
		}
		if strings.ContainsAny(name, "*:/@ ") {
			return nil, fmt.Errorf("--acme-domain %q: not a DNS name (no wildcard, port, scheme or path)", d)
		}
		if !strings.Contains(strings.Trim(name, "."), ".") {
			return nil, fmt.Errorf("--acme-domain %q: a certificate needs a DNS name with at least one dot (e.g. outdial.example.com)", d)
		}
		ascii, err := idna.Lookup.ToASCII(name)
		if err != nil {
			return nil, fmt.Errorf("--acme-domain %q: not a DNS name: %w", d, err)
		}
		names = append(names, ascii)
	}
	return names, nil
}

// acmeHTTPClient is the ACME client's HTTP client: the system's roots,
// plus every certificate of the PEM file caRoot when it is set (a private
// CA's directory, or a test server's).
func acmeHTTPClient(caRoot string) (*http.Client, error) {
	if caRoot == "" {
		return http.DefaultClient, nil
	}
	pemBytes, err := os.ReadFile(caRoot)
	if err != nil {
		return nil, fmt.Errorf("--acme-ca-root: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pemBytes) {
		return nil, fmt.Errorf("--acme-ca-root %s: no PEM certificate in it", caRoot)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: tr}, nil
}

// obtainCertificates asks the manager for each domain's certificate once at
// start, as a browser's handshake would (ECDSA), so that the certificate is
// there before the first visitor and a problem with the CA or the domain
// shows in the log at start rather than as a failed handshake. A
// certificate in the cache is read from it: no order. It returns once every
// domain has an answer or ctx ends.
func (t *tlsSetup) obtainCertificates(ctx context.Context) {
	if t.acme == nil {
		return
	}
	for _, name := range t.domains {
		hello := &tls.ClientHelloInfo{
			ServerName:        name,
			SignatureSchemes:  []tls.SignatureScheme{tls.ECDSAWithP256AndSHA256},
			SupportedCurves:   []tls.CurveID{tls.CurveP256},
			CipherSuites:      []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
			SupportedVersions: []uint16{tls.VersionTLS13, tls.VersionTLS12},
		}
		start := time.Now()
		cert, err := t.acme.GetCertificate(hello)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			t.log.Error("ACME certificate not obtained: https handshakes for this name fail until it is",
				slog.String("domain", name), slog.String("error", err.Error()))
			continue
		}
		attrs := []any{slog.String("domain", name), slog.Duration("took", time.Since(start))}
		if cert.Leaf != nil {
			attrs = append(attrs, slog.Time("not_after", cert.Leaf.NotAfter))
		}
		t.log.Info("ACME certificate ready", attrs...)
	}
}
