package realbin

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // OpenPostgres's driver: "pgx"
)

// Database is where the services a benchmark starts keep their state:
// by default a SQLite file in a data directory, as a single host runs;
// with a URL, an empty PostgreSQL database the benchmark was given, with a
// versitygw S3 store it starts itself (serve refuses its bundled store
// beside --database-url) and a server secret every node shares (API.md 16).
type Database struct {
	// URL is the PostgreSQL database, "" for SQLite.
	URL string
	// DataDir is SQLite's data directory; on PostgreSQL the one `apikey
	// create` is given (it writes nothing there).
	DataDir string
	// S3 is the remote object store the nodes share (PostgreSQL only).
	S3 *S3

	secret string  // OUTDIAL_SECRET_KEY of every node (PostgreSQL only)
	sql    *sql.DB // a connection to URL, for the benchmark's own reads
	closed bool    // Close ran
}

// Postgres reports whether the database is PostgreSQL.
func (d *Database) Postgres() bool { return d.URL != "" }

// Engine is "sqlite" or "postgres", as GET /api/v1/health names it.
func (d *Database) Engine() string {
	if d.Postgres() {
		return "postgres"
	}
	return "sqlite"
}

// OpenDatabase prepares the benchmark's database in its temporary
// directory tmp. With url "" it is SQLite in tmp/data, which serve
// creates. Otherwise url must be a postgres:// URL of an empty database
// (no table outside the system schemas: the benchmark's figures assume a
// fresh one; create it with psql and drop it afterwards): OpenDatabase
// checks it is, makes a random server secret and starts versitygw on a
// free port with its objects in tmp/s3.
func OpenDatabase(tmp, url string) (*Database, error) {
	d := &Database{URL: url, DataDir: filepath.Join(tmp, "data")}
	if url == "" {
		return d, nil
	}
	if !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://") {
		return nil, fmt.Errorf("-database-url must be a postgres:// or postgresql:// URL")
	}
	db, err := OpenPostgres(url)
	if err != nil {
		return nil, err
	}
	d.sql = db
	var name string
	var tables int
	err = db.QueryRow(`SELECT current_database(), (SELECT count(*) FROM pg_tables
		WHERE schemaname NOT IN ('pg_catalog', 'information_schema'))`).Scan(&name, &tables)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("read the database: %w", err)
	}
	if tables != 0 {
		db.Close()
		return nil, fmt.Errorf("database %s holds %d tables: give the benchmark an empty database (CREATE DATABASE ...)", name, tables)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		db.Close()
		return nil, err
	}
	d.secret = base64.StdEncoding.EncodeToString(key)
	d.S3, err = StartS3(filepath.Join(tmp, "s3"), filepath.Join(tmp, "versitygw.log"))
	if err != nil {
		db.Close()
		return nil, err
	}
	return d, nil
}

// OpenPostgres opens a pool of at most two connections to the PostgreSQL
// database url (database/sql with pgx's driver), named outdial-bench
// (application_name, so that BackendCPU leaves them out), and pings it.
func OpenPostgres(url string) (*sql.DB, error) {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	db, err := sql.Open("pgx", url+sep+"application_name=outdial-bench")
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", RedactURL(url), err)
	}
	db.SetMaxOpenConns(2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s: %w", RedactURL(url), err)
	}
	return db, nil
}

// RedactURL is a database URL without its password, for messages.
func RedactURL(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			if colon := strings.IndexByte(rest[:at], ':'); colon >= 0 {
				return u[:i+3] + rest[:colon] + ":xxxxx" + rest[at:]
			}
		}
	}
	return u
}

// SQL is the benchmark's own connection to the PostgreSQL database (nil
// on SQLite).
func (d *Database) SQL() *sql.DB { return d.sql }

// Env is Env(extra...) plus, on PostgreSQL, the shared server secret
// (OUTDIAL_SECRET_KEY: with --database-url serve never makes one up).
func (d *Database) Env(extra ...string) []string {
	if d.Postgres() {
		extra = append(extra, "OUTDIAL_SECRET_KEY="+d.secret)
	}
	return Env(extra...)
}

// APIKey creates an API key for organization org (created on first use)
// with `bin apikey create`, on SQLite in DataDir as APIKey does, on
// PostgreSQL with --database-url, and returns it. Any failure is fatal.
func (d *Database) APIKey(bin, org string, env []string) string {
	if !d.Postgres() {
		return APIKey(bin, d.DataDir, org, env)
	}
	cmd := exec.Command(bin, "apikey", "create", "--data", d.DataDir, "--database-url", d.URL, "--org", org)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		Fatalf("apikey create --database-url: %v %s", err, msg)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// ServeArgs are the flags every serve process of the benchmark takes for
// this database: none on SQLite (--data is Serve's); on PostgreSQL
// --database-url and the S3 store's flags.
func (d *Database) ServeArgs() []string {
	if !d.Postgres() {
		return nil
	}
	return append([]string{"--database-url", d.URL}, d.S3.ServeArgs()...)
}

// Close stops versitygw and closes the benchmark's connection (nothing on
// SQLite). It may be called more than once.
func (d *Database) Close() {
	if d.closed {
		return
	}
	d.closed = true
	if d.S3 != nil {
		d.S3.Stop()
	}
	if d.sql != nil {
		d.sql.Close()
	}
}
