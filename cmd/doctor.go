package cmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/outdial/outdial/dialer/carrier"
)

func newDoctor() *cobra.Command {
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check an install: database, disk, public URL, clock, provider credentials",
		Long: `Check an install and print one line per check, starting with ok, warn or FIX:

  database     DATA/outdial.db (or --database-url's PostgreSQL database) exists,
               opens and is at this binary's schema version (newer: FIX; migrations
               pending: FIX, outdial migrate applies them), and the server secret
               decrypts what it holds (else FIX: serve refuses to start)
  disk         free space of the data directory's filesystem against the reserve
               (--disk-reserve-bytes, as serve: FIX below it, warn below twice it)
  public URL   <public-url>/api/v1/health answers 200 to a request from outside, as
               a provider's webhook would (no redirect followed); over https the
               certificate must verify (else FIX) and have 14 days left (else warn)
  clock        this host's clock against the Date header of each configured
               provider's API (OUTDIAL_*_API_URL honoured; ARI: ari_endpoint): more
               than 5 s apart is FIX, 2 to 5 s warn, no answer warn
  telephony    each configuration of each organization, by name: its credentials
               with one read-only request to the provider (refused: FIX; the
               provider unreachable or failing: warn); secrets are never printed

It writes nothing: not the database (opened only when at the current schema),
not the secret key. Exit status 1 when a line says FIX, else 0.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			d := &doctor{out: c.OutOrStdout(), flags: c.Flags(), carriers: carrierOptions(), now: time.Now}
			if fixes := d.run(c.Context()); fixes > 0 {
				return fmt.Errorf("doctor: %d check(s) to fix", fixes)
			}
			return nil
		},
	}
	f := c.Flags()
	addDatabaseURLFlag(f)
	f.String("public-url", "", "base URL providers and browsers use to reach the service, as given to serve")
	f.Int64("disk-reserve-bytes", -1, "the reserve serve keeps (-1: the smaller of 1 GiB and 5% of the filesystem; 0: none)")
	f.Duration("timeout", 10*time.Second, "time each network check may take")
	return c
}

// doctor runs the checks of `outdial doctor` and prints their lines.
type doctor struct {
	out      io.Writer
	flags    *pflag.FlagSet
	carriers carrier.Options
	// now is the clock compared with the providers' (tests shift it).
	now func() time.Time
	// roots, when not nil, replaces the system's roots for the public
	// URL's certificate (tests).
	roots *x509.CertPool
	fixes int
}

// line prints one check's result: level is "ok", "warn" or "FIX".
func (d *doctor) line(level, check, format string, args ...any) {
	if level == "FIX" {
		d.fixes++
	}
	fmt.Fprintf(d.out, "%-4s %s: %s\n", level, check, fmt.Sprintf(format, args...))
}

// run runs every check and returns how many said FIX.
func (d *doctor) run(ctx context.Context) int {
	db := d.checkDatabase(ctx)
	if db != nil {
		defer db.Close()
	}
	d.checkDisk()
	d.checkPublicURL(ctx)
	configs := d.configurations(ctx, db)
	d.checkClock(ctx, configs)
	d.checkCredentials(ctx, configs)
	return d.fixes
}

// client is the HTTP client of the network checks: the timeout of
// --timeout, no redirects followed (a provider posting a webhook does not
// follow one), and the test's roots when set.
func (d *doctor) client() *http.Client {
	timeout, _ := d.flags.GetDuration("timeout")
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if d.roots != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: d.roots, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Timeout: timeout, Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
