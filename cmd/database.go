package cmd

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/outdial/outdial/store"
)

// addDatabaseURLFlag registers --database-url (env OUTDIAL_DATABASE_URL) on
// a command that touches the database (API.md 16).
func addDatabaseURLFlag(f *pflag.FlagSet) {
	f.String("database-url", "", "PostgreSQL database to use instead of DATA/outdial.db: postgres://USER:PASS@HOST:PORT/DB?sslmode=...")
}

// databaseURL returns --database-url, "" when it is not set (or the command
// has no such flag). A value that is not a postgres:// or postgresql:// URL
// is an error, which shows it without its password.
func databaseURL(f *pflag.FlagSet) (string, error) {
	u, _ := f.GetString("database-url")
	if u == "" {
		return "", nil
	}
	if !store.IsDatabaseURL(u) {
		return "", fmt.Errorf("--database-url must be a postgres:// or postgresql:// URL, got %s", redactURL(u))
	}
	return u, nil
}

// redactURL is the database URL u fit for a message or a log line: its
// password, and a password query parameter, shown as xxxxx.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "the --database-url (not shown: it does not parse as a URL)"
	}
	if q := p.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		p.RawQuery = q.Encode()
	}
	return p.Redacted()
}

// describeDatabase names the database at location (a file's path or a URL)
// for messages.
func describeDatabase(location string) string {
	if store.IsDatabaseURL(location) {
		return redactURL(location)
	}
	return location
}

// databaseLocation returns the database c's flags name, --database-url
// when set, else DATA/outdial.db, and the secret key's path,
// DATA/secret.key. With create, a SQLite database's data directory is
// created when missing (dataPaths); a PostgreSQL database's never is: the
// command reads the key there only when it exists.
func databaseLocation(c *cobra.Command, create bool) (location, keyPath string, err error) {
	u, err := databaseURL(c.Flags())
	if err != nil {
		return "", "", err
	}
	dir, err := c.Flags().GetString("data")
	if err != nil {
		return "", "", err
	}
	if u != "" {
		return u, filepath.Join(dir, "secret.key"), nil
	}
	if create {
		_, dbPath, keyPath, err := dataPaths(c)
		return dbPath, keyPath, err
	}
	if err := checkDataDir(dir); err != nil {
		return "", "", err
	}
	return filepath.Join(dir, dbFileName), filepath.Join(dir, "secret.key"), nil
}

// openStore loads the server secret and opens the database at location (a
// SQLite file, created when missing, or a PostgreSQL URL). A database
// written by a newer Outdial is refused first, before the secret key or
// anything else is written (*store.SchemaTooNewError).
//
// The secret of a SQLite file is OUTDIAL_SECRET_KEY, else keyPath, created
// on first use. A PostgreSQL database is shared by nodes that must share
// the secret that sealed what it holds, so none is ever made up for it: it
// is OUTDIAL_SECRET_KEY or an existing keyPath, and without either,
// commands that seal or open credentials (sealing: serve) are refused,
// while the others (apikey) run with a throwaway key that is not written.
func openStore(ctx context.Context, location, keyPath string, sealing bool) (*store.DB, *store.Sealer, error) {
	var key []byte
	if store.IsDatabaseURL(location) {
		if _, _, err := store.PendingMigrations(ctx, location); err != nil {
			return nil, nil, err
		}
		k, err := sharedKey(keyPath, sealing)
		if err != nil {
			return nil, nil, err
		}
		key = k
	} else {
		if err := store.CheckSchema(ctx, location); err != nil {
			return nil, nil, err
		}
		k, err := store.LoadOrCreateKey(lookupEnv("OUTDIAL_SECRET_KEY"), keyPath)
		if err != nil {
			return nil, nil, err
		}
		key = k
		if err := createPrivate(location); err != nil {
			return nil, nil, err
		}
	}
	sealer, err := store.NewSealer(key)
	if err != nil {
		return nil, nil, err
	}
	db, err := store.Open(ctx, location, sealer)
	if err != nil {
		return nil, nil, err
	}
	return db, sealer, nil
}

// errNoSharedSecret: serve on a PostgreSQL database found neither
// OUTDIAL_SECRET_KEY nor DATA/secret.key.
var errNoSharedSecret = errors.New("no server secret for the shared database")

// sharedKey returns the secret of a node on a shared database:
// OUTDIAL_SECRET_KEY, else keyPath when it exists; else, when the command
// does not seal, a random key that is not written anywhere.
func sharedKey(keyPath string, sealing bool) ([]byte, error) {
	env := lookupEnv("OUTDIAL_SECRET_KEY")
	if env != "" {
		return store.LoadOrCreateKey(env, keyPath)
	}
	if _, err := os.Stat(keyPath); err == nil {
		return store.LoadOrCreateKey("", keyPath)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read secret key: %w", err)
	}
	if sealing {
		return nil, fmt.Errorf("%w: set OUTDIAL_SECRET_KEY to the secret every node sharing it uses (base64 of 32 bytes, such as `openssl rand -base64 32` prints for the first node), or put that secret as %s; with --database-url none is ever created", errNoSharedSecret, keyPath)
	}
	key := make([]byte, store.KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate secret key: %w", err)
	}
	return key, nil
}

// secretSource names where this process's server secret comes from, for
// messages: OUTDIAL_SECRET_KEY or keyPath.
func secretSource(keyPath string) string {
	if lookupEnv("OUTDIAL_SECRET_KEY") != "" {
		return "OUTDIAL_SECRET_KEY"
	}
	return keyPath
}

// checkSecret refuses a database whose sealed values this process's secret
// cannot open (API.md 16): another secret sealed them, and a node with this
// one would fail every call of those configurations, and every webhook
// another node's calls send it. created says the key file was created by
// this start (no secret was there): it is removed again, so that the
// right one can be put in its place.
func checkSecret(ctx context.Context, db *store.DB, keyPath string, created bool) error {
	err := db.CheckSecret(ctx)
	if !errors.Is(err, store.ErrWrongSecret) {
		return err
	}
	if created {
		_ = os.Remove(keyPath) // the key this start made up; the refusal says why
		return fmt.Errorf("refusing to start: %w; %s was missing, so a new secret was tried: put the secret.key that sealed them there, or set OUTDIAL_SECRET_KEY to it", err, keyPath)
	}
	return fmt.Errorf("refusing to start: %w; this node's secret is %s: every node sharing a database needs the secret that sealed it (the same OUTDIAL_SECRET_KEY)", err, secretSource(keyPath))
}

// keyMissing reports whether the server secret will be made up by
// openStore: OUTDIAL_SECRET_KEY is not set and keyPath does not exist.
func keyMissing(keyPath string) bool {
	if lookupEnv("OUTDIAL_SECRET_KEY") != "" {
		return false
	}
	_, err := os.Stat(keyPath)
	return errors.Is(err, fs.ErrNotExist)
}
