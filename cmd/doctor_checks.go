package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/diskspace"
)

// Thresholds of the doctor's checks.
const (
	// certWarnDays: a certificate with fewer days left is a warn.
	certWarnDays = 14
	// clockFix: a clock further than this from a provider's is FIX. The
	// Date header has whole seconds and a request takes time, so 2 s is
	// within its precision (ok up to clockWarn); a host kept by NTP is
	// within milliseconds, and one 5 s off has no time sync and drifts on:
	// calling hours, webhook timestamps (Telnyx's 5 min tolerance), JWT
	// lifetimes (Vonage) and certificate validity all read this clock.
	clockFix  = 5 * time.Second
	clockWarn = 2 * time.Second
)

// checkDatabase checks the database (DATA/outdial.db, or the PostgreSQL
// database of --database-url) and returns the opened store when it is at
// this binary's schema and its secret key loads, else nil. The store is
// returned also when the secret does not open what it holds (a FIX line
// says so), so that each configuration is reported by name.
func (d *doctor) checkDatabase(ctx context.Context) *store.DB {
	dir, _ := d.flags.GetString("data")
	u, err := databaseURL(d.flags)
	if err != nil {
		d.line("FIX", "database", "%v", err)
		return nil
	}
	location, name, migrateFlags := u, redactURL(u), "--database-url "+redactURL(u)
	if u == "" {
		if err := checkDataDir(dir); err != nil {
			d.line("FIX", "database", "%v", err)
			return nil
		}
		path := filepath.Join(dir, dbFileName)
		if _, err := os.Stat(path); err != nil {
			d.line("FIX", "database", "%s: %v (is --data the service's data directory?)", path, errors.Unwrap(err))
			return nil
		}
		location, name, migrateFlags = path, path, "--data "+dir
	}
	current, pending, err := store.PendingMigrations(ctx, location)
	switch {
	case err != nil:
		d.line("FIX", "database", "%s: %v", name, err)
		return nil
	case len(pending) > 0:
		d.line("FIX", "database", "%s is at schema version %d, this outdial's is %d: %d migration(s) pending (outdial migrate %s applies them; serve does at start)",
			name, current, pending[len(pending)-1].Version, len(pending), migrateFlags)
		return nil
	}
	keyPath := filepath.Join(dir, "secret.key")
	env := lookupEnv("OUTDIAL_SECRET_KEY")
	if env == "" {
		if _, err := os.Stat(keyPath); errors.Is(err, fs.ErrNotExist) {
			d.line("FIX", "database", "%s: no secret key (%s is missing and OUTDIAL_SECRET_KEY is not set): stored credentials cannot be read", name, keyPath)
			return nil
		}
	}
	key, err := store.LoadOrCreateKey(env, keyPath)
	if err != nil {
		d.line("FIX", "database", "%v", err)
		return nil
	}
	sealer, err := store.NewSealer(key)
	if err != nil {
		d.line("FIX", "database", "%v", err)
		return nil
	}
	db, err := store.Open(ctx, location, sealer)
	if err == nil {
		err = db.Ping(ctx)
		if err != nil {
			db.Close()
		}
	}
	if err != nil {
		d.line("FIX", "database", "%s: %v", name, err)
		return nil
	}
	if err := db.CheckSecret(ctx); errors.Is(err, store.ErrWrongSecret) {
		d.line("FIX", "database", "%s: %v: this host's secret is %s; serve refuses to start with it (every node sharing a database needs the secret that sealed it)",
			name, err, secretSource(keyPath))
		return db
	} else if err != nil {
		d.line("FIX", "database", "%s: %v", name, err)
		db.Close()
		return nil
	}
	d.line("ok", "database", "%s opens and is at schema version %d", name, current)
	return db
}

// checkDisk compares the data directory's free space with the reserve.
func (d *doctor) checkDisk() {
	dir, _ := d.flags.GetString("data")
	u, err := diskspace.Statfs(dir)()
	if err != nil {
		d.line("warn", "disk", "free space of %s not measured: %v", dir, err)
		return
	}
	reserve, err := diskReserve(d.flags, dir)
	switch {
	case err != nil:
		d.line("FIX", "disk", "%v", err)
	case reserve.Bytes() == 0:
		d.line("ok", "disk", "%s free on %s, no reserve", diskspace.Format(u.Free), dir)
	case u.Free < reserve.Bytes():
		d.line("FIX", "disk", "%s free on %s, below the %s reserve: uploads and campaign creates are refused (507)",
			diskspace.Format(u.Free), dir, diskspace.Format(reserve.Bytes()))
	case u.Free/2 < reserve.Bytes():
		d.line("warn", "disk", "%s free on %s, less than twice the %s reserve", diskspace.Format(u.Free), dir, diskspace.Format(reserve.Bytes()))
	default:
		d.line("ok", "disk", "%s free on %s, reserve %s", diskspace.Format(u.Free), dir, diskspace.Format(reserve.Bytes()))
	}
}

// checkPublicURL requests <public-url>/api/v1/health as a provider would.
func (d *doctor) checkPublicURL(ctx context.Context) {
	base, _ := d.flags.GetString("public-url")
	if base == "" {
		d.line("warn", "public URL", "not checked: give --public-url (or OUTDIAL_PUBLIC_URL), the URL providers reach the service at")
		return
	}
	u := strings.TrimRight(base, "/") + "/api/v1/health"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		d.line("FIX", "public URL", "%s: %v", u, err)
		return
	}
	res, err := d.client().Do(req)
	if err != nil {
		d.line("FIX", "public URL", "%s does not answer: %v", u, err)
		return
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var h struct{ Status, Version string }
	_ = json.Unmarshal(body, &h) // a body that is not health's leaves h empty
	switch {
	case res.StatusCode >= 300 && res.StatusCode < 400:
		d.line("FIX", "public URL", "%s answers %d to %s: providers do not follow it; give that URL as --public-url", u, res.StatusCode, res.Header.Get("Location"))
		return
	case res.StatusCode != http.StatusOK || h.Status != "ok":
		d.line("FIX", "public URL", "%s answers %d %.80q, not Outdial's health", u, res.StatusCode, body)
		return
	}
	if h.Version != Version {
		d.line("warn", "public URL", "%s is outdial %s; this binary is %s", u, h.Version, Version)
	} else {
		d.line("ok", "public URL", "%s answers 200 (outdial %s)", u, h.Version)
	}
	if res.TLS == nil || len(res.TLS.PeerCertificates) == 0 {
		return
	}
	cert := res.TLS.PeerCertificates[0]
	left := cert.NotAfter.Sub(d.now())
	days := int(left.Hours() / 24)
	if left < certWarnDays*24*time.Hour {
		d.line("warn", "certificate", "%s expires %s, in %d day(s): renew it", u, cert.NotAfter.UTC().Format(time.RFC3339), days)
	} else {
		d.line("ok", "certificate", "%s is valid until %s (%d days)", u, cert.NotAfter.UTC().Format(time.RFC3339), days)
	}
}

// doctorConfig is one telephony configuration with its organization.
type doctorConfig struct {
	org    string
	config store.TelephonyConfig
	err    error // the credentials did not open
}

// configurations returns every organization's configurations (orgs are
// named by their API keys: an organization is created with its first key),
// ordered by organization and name; none without a database.
func (d *doctor) configurations(ctx context.Context, db *store.DB) []doctorConfig {
	if db == nil {
		return nil
	}
	keys, err := db.ListAPIKeys(ctx)
	if err != nil {
		d.line("FIX", "telephony", "list organizations: %v", err)
		return nil
	}
	orgs := map[int64]string{}
	for _, k := range keys {
		orgs[k.OrganizationID] = k.OrganizationName
	}
	var out []doctorConfig
	for id, name := range orgs {
		list, err := db.ListTelephonyConfigs(ctx, id)
		if err != nil {
			d.line("FIX", "telephony", "organization %q: %v", name, err)
			continue
		}
		for _, c := range list {
			full, err := db.GetTelephonyConfig(ctx, id, c.ID)
			if err != nil {
				out = append(out, doctorConfig{org: name, config: c, err: err})
				continue
			}
			out = append(out, doctorConfig{org: name, config: *full})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].org != out[j].org {
			return out[i].org < out[j].org
		}
		return out[i].config.Name < out[j].config.Name
	})
	return out
}

// checkClock compares this host's clock with the Date header of each
// distinct provider API the configurations call (one HEAD each).
func (d *doctor) checkClock(ctx context.Context, configs []doctorConfig) {
	bases := map[string]bool{}
	for _, c := range configs {
		if c.err == nil {
			if b := carrier.APIBaseURL(c.config.Provider, c.config.Credentials, d.carriers); b != "" {
				bases[b] = true
			}
		}
	}
	if len(bases) == 0 {
		d.line("ok", "clock", "not compared: no telephony configuration names a provider")
		return
	}
	sorted := make([]string, 0, len(bases))
	for b := range bases {
		sorted = append(sorted, b)
	}
	sort.Strings(sorted)
	client := d.client()
	for _, b := range sorted {
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, b, nil)
		if err != nil {
			d.line("warn", "clock", "%s: %v", b, err)
			continue
		}
		sent := d.now()
		res, err := client.Do(req)
		if err != nil {
			d.line("warn", "clock", "not compared with %s: no answer (%v)", b, err)
			continue
		}
		res.Body.Close()
		// The answer's time is read against the middle of the exchange.
		mid := sent.Add(d.now().Sub(sent) / 2)
		date, err := http.ParseTime(res.Header.Get("Date"))
		if err != nil {
			d.line("warn", "clock", "not compared with %s: its answer has no Date header", b)
			continue
		}
		// Date has whole seconds: the provider's time was within the
		// second after it, so its middle is the best guess.
		offset := mid.Sub(date.Add(500 * time.Millisecond)).Round(100 * time.Millisecond)
		abs := max(offset, -offset)
		switch {
		case abs > clockFix:
			d.line("FIX", "clock", "this host is %s off %s's clock (more than %s): turn on time synchronisation (NTP)", offset, b, clockFix)
		case abs > clockWarn:
			d.line("warn", "clock", "this host is %s off %s's clock", offset, b)
		default:
			d.line("ok", "clock", "within %s of %s's clock", clockWarn, b)
		}
	}
}

// checkCredentials checks each configuration's credentials with one
// read-only request to its provider.
func (d *doctor) checkCredentials(ctx context.Context, configs []doctorConfig) {
	timeout, _ := d.flags.GetDuration("timeout")
	for _, c := range configs {
		name := fmt.Sprintf("%q (organization %q, %s)", c.config.Name, c.org, c.config.Provider)
		if c.err != nil {
			d.line("FIX", "telephony", "%s: its stored credentials do not open with this secret key: %v", name, c.err)
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		check, err := carrier.CheckCredentials(cctx, c.config.Provider, c.config.Credentials, d.carriers)
		cancel()
		var refusal *carrier.Error
		switch {
		case err == nil:
			d.line("ok", "telephony", "%s: credentials accepted (%s)", name, check.Request)
		case errors.Is(err, carrier.ErrCredentialsRefused):
			d.line("FIX", "telephony", "%s: credentials refused by %s: %v", name, check.Request, err)
		case errors.As(err, &refusal):
			d.line("FIX", "telephony", "%s: %s refused: %v", name, check.Request, err)
		case check.Request == "":
			d.line("FIX", "telephony", "%s: %v", name, err)
		default:
			d.line("warn", "telephony", "%s: not checked, %s failed: %v", name, check.Request, err)
		}
	}
}
