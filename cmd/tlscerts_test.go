package cmd

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCA is a certificate authority made for a test: it signs leaf
// certificates for servers the test runs (exported for package cmd_test).
type TestCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate, PEM-encoded; Pool trusts it alone.
	PEM  []byte
	Pool *x509.CertPool
}

// NewTestCA makes a CA valid from an hour ago for a day.
func NewTestCA(t *testing.T) *TestCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(t),
		Subject:               pkix.Name{CommonName: "outdial test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &TestCA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), Pool: pool}
}

// TestLeaf is a server certificate signed by a TestCA.
type TestLeaf struct {
	CertPEM, KeyPEM []byte
	Serial          *big.Int
}

// Leaf signs a server certificate for names (DNS names, or IP addresses),
// valid from an hour ago for a day.
func (ca *TestCA) Leaf(t *testing.T, names ...string) TestLeaf {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(t),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return TestLeaf{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		Serial:  tmpl.SerialNumber,
	}
}

// Write writes the leaf's certificate and key to certPath and keyPath.
func (l TestLeaf) Write(t *testing.T, certPath, keyPath string) {
	t.Helper()
	writeFile(t, certPath, l.CertPEM)
	writeFile(t, keyPath, l.KeyPEM)
}

// writeFile writes data to path (mode 0600) or fails the test.
func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// WriteTestFile writes data into a new file named name in dir and returns
// its path (exported for package cmd_test).
func WriteTestFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	writeFile(t, path, data)
	return path
}

func randomSerial(t *testing.T) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ServedCert completes a TLS handshake with addr asking for serverName
// (none when empty) and returns the certificate chain the server sent,
// after checking it against roots (no check when roots is nil). tlsVersion
// caps the client's version (0: Go's default).
func ServedCert(addr, serverName string, roots *x509.CertPool, tlsVersion uint16) ([]*x509.Certificate, error) {
	conf := &tls.Config{ServerName: serverName, RootCAs: roots, MaxVersion: tlsVersion}
	if roots == nil {
		conf.InsecureSkipVerify = true // the test inspects the chain itself
	}
	if tlsVersion != 0 && tlsVersion < tls.VersionTLS12 {
		conf.MinVersion = tlsVersion
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, conf)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates, nil
}
