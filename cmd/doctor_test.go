package cmd

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/arisim"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// doctorEnv is what a doctor case runs against: a data directory with
// organization acme, the simulators its configurations point at, and a
// public URL.
type doctorEnv struct {
	dir       string
	twilio    *twiliosim.Server
	ari       *arisim.Server
	public    string
	roots     *x509.CertPool
	flags     []string
	now       func() time.Time
	wantFixes int
}

// healthServer answers /api/v1/health as serve does, with version.
func healthHandler(version string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/health" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"status": "ok", "version": version}) //nolint:errcheck
	})
}

// newDoctorEnv makes a data directory with organization acme and its
// configurations: "Twilio main" (the simulator's credentials), and "PBX"
// (the ARI simulator's); the public URL is a healthy service's.
func newDoctorEnv(t *testing.T) *doctorEnv {
	t.Helper()
	clearEnv(t)
	e := &doctorEnv{dir: t.TempDir(), now: time.Now}
	e.twilio = twiliosim.Start(twiliosim.Config{})
	t.Cleanup(e.twilio.Close)
	e.ari = arisim.Start(arisim.Config{})
	t.Cleanup(e.ari.Close)
	createKey(t, "--data", e.dir, "--org", "acme")
	db := openData(t, e.dir)
	org := orgOf(t, db)
	for _, c := range []store.TelephonyConfig{
		{Name: "Twilio main", Provider: "twilio", Credentials: e.twilio.Credentials(false)},
		{Name: "PBX", Provider: "ari", Credentials: e.ari.Credentials()},
	} {
		if _, err := db.CreateTelephonyConfig(context.Background(), org, c); err != nil {
			t.Fatal(err)
		}
	}
	pub := httptest.NewServer(healthHandler(Version))
	t.Cleanup(pub.Close)
	e.public = pub.URL
	return e
}

func orgOf(t *testing.T, db *store.DB) int64 {
	t.Helper()
	keys, err := db.ListAPIKeys(context.Background())
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys %v, %v", keys, err)
	}
	return keys[0].OrganizationID
}

// run runs the doctor on e and returns its output and FIX count.
func (e *doctorEnv) run(t *testing.T) (string, int) {
	t.Helper()
	f := pflag.NewFlagSet("doctor", pflag.ContinueOnError)
	f.String("data", e.dir, "")
	f.AddFlagSet(newDoctor().Flags())
	args := append([]string{"--public-url", e.public}, e.flags...)
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	d := &doctor{out: &out, flags: f, now: e.now, roots: e.roots,
		carriers: carrier.Options{BaseURLs: map[string]string{"twilio": e.twilio.URL()}}}
	fixes := d.run(context.Background())
	return out.String(), fixes
}

// tlsHealth serves a healthy service over https with a certificate valid
// until notAfter, signed by a CA it returns as a pool.
func tlsHealth(t *testing.T, notAfter time.Time) (string, *x509.CertPool) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "doctor test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour * 365),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: notAfter,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(healthHandler(Version))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return srv.URL, pool
}

// SQLite-specific: the checks of DATA/outdial.db (its schema version, its directory).
func TestDoctor(t *testing.T) {
	tests := []struct {
		name string
		// setup changes the healthy environment.
		setup func(t *testing.T, e *doctorEnv)
		// want are patterns of lines that must be printed.
		want []string
	}{
		{"healthy", nil, []string{
			`^ok   database: .*outdial\.db opens and is at schema version ` + strconv.Itoa(store.SupportedSchemaVersion()) + `$`,
			`^ok   disk: .* free on .*, reserve `,
			`^ok   public URL: http://127\.0\.0\.1:\d+/api/v1/health answers 200 \(outdial dev\)$`,
			`^ok   clock: within 2s of http://127\.0\.0\.1:\d+'s clock$`,
			`^ok   telephony: "PBX" \(organization "acme", ari\): credentials accepted \(GET http://127\.0\.0\.1:\d+/ari/asterisk/info\)$`,
			`^ok   telephony: "Twilio main" \(organization "acme", twilio\): credentials accepted \(GET http://127\.0\.0\.1:\d+/2010-04-01/Accounts/AC0123456789abcdef0123456789abcdef\.json\)$`,
		}},
		{"a wrong auth token", func(t *testing.T, e *doctorEnv) {
			db := openData(t, e.dir)
			creds := e.twilio.Credentials(false)
			creds["auth_token"] = "not-the-token-0123456789"
			if _, err := db.CreateTelephonyConfig(context.Background(), orgOf(t, db), store.TelephonyConfig{Name: "Old Twilio", Provider: "twilio", Credentials: creds}); err != nil {
				t.Fatal(err)
			}
			e.wantFixes = 1
		}, []string{`^FIX  telephony: "Old Twilio" \(organization "acme", twilio\): credentials refused by GET http://.*: the provider refused the credentials \(http 401\)`}},
		{"a newer schema", func(t *testing.T, e *doctorEnv) {
			setUserVersion(t, filepath.Join(e.dir, "outdial.db"), 99)
			e.wantFixes = 1
		}, []string{`^FIX  database: .*outdial\.db: database schema version 99 is newer than this outdial supports \(\d+\)$`,
			`^ok   clock: not compared: no telephony configuration`}},
		{"migrations pending", func(t *testing.T, e *doctorEnv) {
			gunzipTo(t, filepath.Join("testdata", "upgrade", "schema-03-640eb184ad49.db.gz"), filepath.Join(e.dir, "outdial.db"))
			e.wantFixes = 1
		}, []string{`^FIX  database: .*outdial\.db is at schema version 3, this outdial's is \d+: \d+ migration\(s\) pending \(outdial migrate --data `}},
		{"no database", func(t *testing.T, e *doctorEnv) {
			e.dir = t.TempDir()
			e.wantFixes = 1
		}, []string{`^FIX  database: .*outdial\.db: no such file or directory \(is --data the service's data directory\?\)$`}},
		{"a database URL nothing answers", func(t *testing.T, e *doctorEnv) {
			e.flags = []string{"--database-url", "postgres://outdial:pw-not-shown@127.0.0.1:1/outdial?sslmode=disable"}
			e.wantFixes = 1
		}, []string{`^FIX  database: postgres://outdial:xxxxx@127\.0\.0\.1:1/outdial\?sslmode=disable: .*connect`}},
		{"a database URL of another kind", func(t *testing.T, e *doctorEnv) {
			e.flags = []string{"--database-url", "mysql://outdial:pw-not-shown@db.example/outdial"}
			e.wantFixes = 1
		}, []string{`^FIX  database: --database-url must be a postgres:// or postgresql:// URL, got mysql://outdial:xxxxx@db\.example/outdial$`}},
		{"another secret key", func(t *testing.T, e *doctorEnv) {
			if err := os.WriteFile(filepath.Join(e.dir, "secret.key"), []byte(base64.StdEncoding.EncodeToString(make([]byte, store.KeySize))+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			e.wantFixes = 3 // the database, and each configuration by name
		}, []string{`^FIX  database: .*outdial\.db: the server secret cannot decrypt what the database holds \(the credentials of telephony configuration \d+ do not open with it: .*\): this host's secret is .*secret\.key; serve refuses to start with it`,
			`^FIX  telephony: "PBX" \(organization "acme", ari\): its stored credentials do not open with this secret key`}},
		{"below the disk reserve", func(t *testing.T, e *doctorEnv) {
			e.flags = []string{"--disk-reserve-bytes", strconv.FormatInt(1<<62, 10)}
			e.wantFixes = 1
		}, []string{`^FIX  disk: .* free on .*, below the 4 EiB reserve|^FIX  disk: .* free on .*, below the .* reserve: uploads and campaign creates are refused \(507\)$`}},
		{"no reserve", func(t *testing.T, e *doctorEnv) { e.flags = []string{"--disk-reserve-bytes", "0"} },
			[]string{`^ok   disk: .* free on .*, no reserve$`}},
		{"public URL down", func(t *testing.T, e *doctorEnv) {
			srv := httptest.NewServer(http.NotFoundHandler())
			e.public = srv.URL
			srv.Close()
			e.wantFixes = 1
		}, []string{`^FIX  public URL: http://127\.0\.0\.1:\d+/api/v1/health does not answer: `}},
		{"public URL redirects", func(t *testing.T, e *doctorEnv) {
			srv := httptest.NewServer(http.RedirectHandler("https://outdial.example/api/v1/health", http.StatusPermanentRedirect))
			t.Cleanup(srv.Close)
			e.public = srv.URL
			e.wantFixes = 1
		}, []string{`^FIX  public URL: .* answers 308 to https://outdial\.example/api/v1/health: providers do not follow it`}},
		{"public URL is not outdial", func(t *testing.T, e *doctorEnv) {
			srv := httptest.NewServer(http.NotFoundHandler())
			t.Cleanup(srv.Close)
			e.public = srv.URL
			e.wantFixes = 1
		}, []string{`^FIX  public URL: .* answers 404 `}},
		{"certificate valid 90 days", func(t *testing.T, e *doctorEnv) {
			e.public, e.roots = tlsHealth(t, time.Now().Add(90*24*time.Hour+time.Hour))
		}, []string{`^ok   public URL: https://127\.0\.0\.1:\d+/api/v1/health answers 200`, `^ok   certificate: .* is valid until .* \(90 days\)$`}},
		{"certificate expiring in 5 days", func(t *testing.T, e *doctorEnv) {
			e.public, e.roots = tlsHealth(t, time.Now().Add(5*24*time.Hour+time.Hour))
		}, []string{`^warn certificate: https://.* expires .*, in 5 day\(s\): renew it$`}},
		{"certificate expired", func(t *testing.T, e *doctorEnv) {
			e.public, e.roots = tlsHealth(t, time.Now().Add(-time.Hour))
			e.wantFixes = 1
		}, []string{`^FIX  public URL: https://.* does not answer: .*certificate has expired`}},
		{"clock 30 s ahead", func(t *testing.T, e *doctorEnv) {
			e.now = func() time.Time { return time.Now().Add(30 * time.Second) }
			e.wantFixes = 2 // one per provider API
		}, []string{`^FIX  clock: this host is (29\.[5-9]|30(\.[0-5])?)s off http://127\.0\.0\.1:\d+'s clock \(more than 5s\): turn on time synchronisation`}},
		{"clock 3.5 s behind", func(t *testing.T, e *doctorEnv) {
			e.now = func() time.Time { return time.Now().Add(-3500 * time.Millisecond) }
		}, []string{`^warn clock: this host is -[34](\.\d)?s off http://`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newDoctorEnv(t)
			if tc.setup != nil {
				tc.setup(t, e)
			}
			out, fixes := e.run(t)
			if fixes != e.wantFixes || strings.Count(out, "\nFIX ")+boolInt(strings.HasPrefix(out, "FIX ")) != fixes {
				t.Errorf("fixes = %d, want %d:\n%s", fixes, e.wantFixes, out)
			}
			for _, w := range tc.want {
				if !regexp.MustCompile(`(?m)` + w).MatchString(out) {
					t.Errorf("no line matches %s:\n%s", w, out)
				}
			}
			for _, secret := range []string{twiliosim.DefaultAuthToken, "not-the-token-0123456789", "pw-not-shown", e.ari.Credentials()["app_password"].(string)} {
				if strings.Contains(out, secret) {
					t.Errorf("a secret is printed:\n%s", out)
				}
			}
		})
	}
}

// TestDoctorExitStatus: the command fails (exit status 1) only when a line
// says FIX.
func TestDoctorExitStatus(t *testing.T) {
	e := newDoctorEnv(t)
	t.Setenv("OUTDIAL_TWILIO_API_URL", e.twilio.URL())
	out, _, err := run(t, "doctor", "--data", e.dir, "--public-url", e.public)
	if err != nil || strings.Contains(out, "FIX") {
		t.Fatalf("healthy doctor = %v:\n%s", err, out)
	}
	out, _, err = run(t, "doctor", "--data", e.dir) // no public URL: a warn
	if err != nil || !strings.Contains(out, "warn public URL: not checked") {
		t.Fatalf("doctor without a public URL = %v:\n%s", err, out)
	}
	out, _, err = run(t, "doctor", "--data", t.TempDir(), "--public-url", e.public)
	if err == nil || !strings.Contains(out, "FIX  database") {
		t.Fatalf("doctor without a database = %v:\n%s", err, out)
	}
}

func setUserVersion(t *testing.T, path string, v int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("PRAGMA user_version = " + strconv.Itoa(v)); err != nil {
		t.Fatal(err)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
