package cmd

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/crypto/acme/autocert"

	"github.com/outdial/outdial/web"
)

// TLS in the binary (API.md 18): serve terminates TLS itself with a
// certificate and key from files (--tls-cert, --tls-key; re-read on SIGHUP)
// or with certificates it obtains and renews from an ACME CA (--acme-domain,
// acme.go). With TLS on, --addr defaults to :443, a plain-HTTP listener on
// --http-addr answers ACME HTTP-01 challenges and redirects everything else
// to https (web.HTTPSRedirect), every response carries HSTS and every cookie
// is Secure (web.Config.TLS), TLS 1.2 is the minimum and --public-url
// defaults to the https address (tlsSetup.defaultPublicURL).

// Defaults of the TLS flags.
const (
	defaultTLSAddr  = ":443"
	defaultHTTPAddr = ":80"
)

// addTLSFlags registers serve's TLS and ACME flags.
func addTLSFlags(f *pflag.FlagSet) {
	f.String("tls-cert", "", "PEM certificate (chain) to serve https with, together with --tls-key; both files are read again on SIGHUP")
	f.String("tls-key", "", "PEM private key of --tls-cert")
	f.StringSlice("acme-domain", nil, "serve https with certificates obtained and renewed automatically from --acme-directory for these DNS names (comma-separated, each with a dot); the first is the default public host")
	f.String("acme-email", "", "contact address given to the ACME CA, which may mail notices about the certificates")
	f.String("acme-directory", acmeDefaultDirectory, "directory URL of the ACME CA (default Let's Encrypt's production directory)")
	f.String("acme-ca-root", "", "PEM file of CA certificates trusted, besides the system's, for requests to --acme-directory")
	f.String("http-addr", defaultHTTPAddr, "with TLS on: plain-HTTP listen address that answers ACME HTTP-01 challenges and redirects everything else to https (empty: none)")
}

// tlsSetup is serve's TLS: exactly one of files (--tls-cert/--tls-key) and
// acme (--acme-domain) is set.
type tlsSetup struct {
	files    *certFiles
	acme     *autocert.Manager
	domains  []string // --acme-domain, normalised
	httpAddr string   // --http-addr; "" for no plain-HTTP listener
	log      *slog.Logger
}

// newTLSSetup reads the TLS flags of f: nil when neither --tls-cert nor
// --acme-domain is set (no TLS), an error for an incomplete or
// contradictory set, a certificate that does not load, or an ACME domain
// that is not a DNS name with a dot. ACME state is kept in DATA/acme.
func newTLSSetup(f *pflag.FlagSet, dataDir string, log *slog.Logger) (*tlsSetup, error) {
	certPath, _ := f.GetString("tls-cert")
	keyPath, _ := f.GetString("tls-key")
	domains, _ := f.GetStringSlice("acme-domain")
	httpAddr, _ := f.GetString("http-addr")
	switch {
	case (certPath == "") != (keyPath == ""):
		return nil, errors.New("--tls-cert and --tls-key go together: set both or neither")
	case certPath != "" && len(domains) > 0:
		return nil, errors.New("--tls-cert and --acme-domain exclude each other: serve a certificate from files or obtain one by ACME")
	case certPath == "" && len(domains) == 0:
		for _, name := range []string{"acme-email", "acme-ca-root"} {
			if v, _ := f.GetString(name); v != "" {
				return nil, fmt.Errorf("--%s needs --acme-domain", name)
			}
		}
		return nil, nil
	}
	if httpAddr != "" {
		if _, _, err := net.SplitHostPort(httpAddr); err != nil {
			return nil, fmt.Errorf("--http-addr %q: %w", httpAddr, err)
		}
	}
	t := &tlsSetup{httpAddr: httpAddr, log: log}
	if certPath != "" {
		files, err := loadCertFiles(certPath, keyPath, log)
		if err != nil {
			return nil, err
		}
		t.files = files
		return t, nil
	}
	m, names, err := newACMEManager(f, domains, dataDir)
	if err != nil {
		return nil, err
	}
	t.acme, t.domains = m, names
	return t, nil
}

// config is the https listener's tls.Config: TLS 1.2 at least, the
// certificate of the files or of the ACME manager (which also answers
// TLS-ALPN-01 challenges).
func (t *tlsSetup) config() *tls.Config {
	if t.acme != nil {
		c := t.acme.TLSConfig()
		c.MinVersion = tls.VersionTLS12
		return c
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: t.files.getCertificate}
}

// reload is what SIGHUP does (serve's signal handler calls it): read
// --tls-cert and --tls-key again; a pair that does not load is logged and
// the previous one kept (the error is returned too). With ACME or without
// TLS there is nothing to read again, which is logged on log.
func (t *tlsSetup) reload(log *slog.Logger) error {
	if t == nil || t.files == nil {
		log.Info("SIGHUP: nothing to reload (certificates are read again only with --tls-cert)")
		return nil
	}
	return t.files.reload()
}

// defaultPublicURL is --public-url's default with TLS on: https:// and the
// first ACME domain, else the host of the listen address (localhost when
// it is empty or unspecified), followed by :port unless the port is 443.
func (t *tlsSetup) defaultPublicURL(listenAddr string) string {
	host, port, err := net.SplitHostPort(listenAddr)
	if err != nil {
		host, port = listenAddr, "443"
	}
	switch {
	case len(t.domains) > 0:
		host = t.domains[0]
	case host == "" || net.ParseIP(host).IsUnspecified():
		host = "localhost"
	}
	u := url.URL{Scheme: "https", Host: net.JoinHostPort(host, port)}
	if port == "443" {
		u.Host = host
		if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
			u.Host = "[" + host + "]"
		}
	}
	return u.String()
}

// serveHTTP starts the plain-HTTP listener on --http-addr (none when it is
// empty): ACME HTTP-01 challenge answers when ACME is on, a 308 to the same
// path and query at public (an https URL) for everything else. It returns
// the function that closes it.
func (t *tlsSetup) serveHTTP(public *url.URL) (func(), error) {
	if t.httpAddr == "" {
		return func() {}, nil
	}
	redirect, err := web.HTTPSRedirect(public.String())
	if err != nil {
		return nil, err
	}
	var h http.Handler = redirect
	if t.acme != nil {
		h = t.acme.HTTPHandler(redirect)
	}
	ln, err := net.Listen("tcp", t.httpAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on --http-addr (empty for no plain-HTTP listener): %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(t.log.Handler(), slog.LevelWarn),
	}
	t.log.Info("outdial http listening", slog.String("addr", ln.Addr().String()),
		slog.String("serves", "ACME HTTP-01 challenges; 308 to https for everything else"))
	go func() { _ = srv.Serve(ln) }()
	return func() { srv.Close() }, nil
}

// certFiles serves the certificate of --tls-cert and --tls-key: the last
// pair that loaded, so that a bad pair written during a renewal never
// replaces a good one.
type certFiles struct {
	certPath, keyPath string
	log               *slog.Logger
	cur               atomic.Pointer[tls.Certificate]
}

// loadCertFiles loads the pair once; serve does not start without a pair
// that loads.
func loadCertFiles(certPath, keyPath string, log *slog.Logger) (*certFiles, error) {
	c := &certFiles{certPath: certPath, keyPath: keyPath, log: log}
	cert, err := c.read()
	if err != nil {
		return nil, err
	}
	c.cur.Store(cert)
	c.logLoaded("TLS certificate loaded", cert)
	return c, nil
}

// read loads and checks the pair: both PEM files parse and the key is the
// certificate's.
func (c *certFiles) read() (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(c.certPath, c.keyPath)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s, --tls-key %s: %w", c.certPath, c.keyPath, err)
	}
	return &cert, nil
}

// reload reads the pair again and serves it from the next handshake on.
// When it does not load, the previous pair stays and the error is logged
// and returned.
func (c *certFiles) reload() error {
	cert, err := c.read()
	if err != nil {
		prev := c.cur.Load()
		c.log.Error("TLS certificate not reloaded: keeping the previous one",
			slog.String("error", err.Error()), slog.Time("previous_not_after", prev.Leaf.NotAfter))
		return err
	}
	c.cur.Store(cert)
	c.logLoaded("TLS certificate reloaded", cert)
	return nil
}

// logLoaded logs what a loaded certificate covers and until when, with a
// warning when it is not valid now.
func (c *certFiles) logLoaded(msg string, cert *tls.Certificate) {
	leaf := cert.Leaf
	attrs := []any{slog.String("subject", leaf.Subject.String()), slog.Any("dns_names", leaf.DNSNames),
		slog.Time("not_after", leaf.NotAfter), slog.String("serial", leaf.SerialNumber.Text(16))}
	c.log.Info(msg, attrs...)
	if now := time.Now(); now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
		c.log.Warn("TLS certificate is not valid now: browsers and providers will refuse it", attrs...)
	}
}

// getCertificate is the tls.Config's: the current pair, whatever the
// client asks for.
func (c *certFiles) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.cur.Load(), nil
}
