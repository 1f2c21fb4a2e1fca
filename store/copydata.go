package store

// Copying a single host's SQLite database into an empty PostgreSQL database
// (API.md 16, `outdial copy-data`).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNotEmpty is matched (errors.Is) by every *NotEmptyError.
var ErrNotEmpty = errors.New("database is not empty")

// NotEmptyError refuses a copy into a database that already holds tables
// of Outdial's: copy-data writes only into an empty database, and nothing
// was changed.
type NotEmptyError struct {
	// Tables are the tables of ours found, sorted.
	Tables []string
}

func (e *NotEmptyError) Error() string {
	names := strings.Join(e.Tables, ", ")
	if n := len(e.Tables); n > 4 {
		names = fmt.Sprintf("%s and %d more", strings.Join(e.Tables[:4], ", "), n-4)
	}
	return fmt.Sprintf("the database already holds outdial's tables (%s): copy-data copies only into an empty database (create a new one, or drop these tables)",
		names)
}

// Is makes errors.Is(err, ErrNotEmpty) true.
func (e *NotEmptyError) Is(target error) bool { return target == ErrNotEmpty }

// SourceSchemaError refuses a source database older than this binary: its
// schema must be the binary's (the tables and columns copied are those of
// the binary's last migration), and copy-data never writes to its source.
// `outdial migrate` on the data directory brings it up to date.
type SourceSchemaError struct {
	// Version is the source's schema version, Supported the binary's.
	Version, Supported int
}

func (e *SourceSchemaError) Error() string {
	return fmt.Sprintf("the source database is at schema version %d, this outdial's is %d: apply its migrations first (outdial migrate)",
		e.Version, e.Supported)
}

// CopyOptions are CopyData's keys and progress report.
type CopyOptions struct {
	// Sealer holds the cluster's server secret, the key every node of the
	// PostgreSQL database will use. Every sealed value copied opens with
	// it. Required.
	Sealer *Sealer
	// SourceSealer, when not nil, holds the key the source database was
	// sealed with where it differs from Sealer's (the data directory's
	// secret.key): a value that opens with it and not with Sealer is
	// re-sealed with Sealer. A value that opens with neither fails the copy
	// before anything is written.
	SourceSealer *Sealer
	// Progress, when not nil, is called every CopyProgressRows rows of a
	// table, and once when the table is done; never by two goroutines at
	// once, but not always on CopyData's.
	Progress func(TableCopy)
}

// CopyProgressRows is how many rows of a table are copied between two
// progress reports.
const CopyProgressRows = 250_000

// TableCopy is the progress of one table's copy.
type TableCopy struct {
	// Table is the table's name.
	Table string
	// Rows copied so far (all of them when Done).
	Rows int64
	// Elapsed since the table's copy began.
	Elapsed time.Duration
	// Keys is the part of Elapsed spent making the table's keys and
	// indexes and checking its foreign keys, once its rows are in (set
	// when Done).
	Keys time.Duration
	// Done is set on the table's last report.
	Done bool
}

// CopyReport says what CopyData copied.
type CopyReport struct {
	// Tables are the tables copied, in the order copied (referenced tables
	// first).
	Tables []TableCopy
	// Rows is the sum of the tables' rows.
	Rows int64
	// SchemaVersion is the destination's schema version (the PostgreSQL
	// migrations' numbering; the source was at SupportedSchemaVersion).
	SchemaVersion int
	// Credentials is the number of sealed credentials (one per telephony
	// configuration) checked; Resealed how many of them opened only with
	// SourceSealer and were re-sealed with Sealer.
	Credentials, Resealed int
	// UnfinishedAttempts is the number of attempts being placed or in
	// flight in the copy. Their webhook URLs carry tokens made with the
	// source's key: when Resealed > 0 (the key changes) the cluster
	// refuses those webhooks, and the calls are settled by asking the
	// provider when a node takes their campaign over.
	UnfinishedAttempts int64
	// Elapsed is the whole copy's duration.
	Elapsed time.Duration
}

// CopyData copies the SQLite database at fromPath, every row of every
// table, into the PostgreSQL database at toURL, which must hold no table
// of Outdial's (a *NotEmptyError otherwise, before anything is written),
// keeping every id, and returns what it copied.
//
// The source is read in one read transaction on a read-only connection: a
// consistent snapshot, taking no lock a writer waits for, and nothing is
// written to it (a serve still running on it keeps running; what it writes
// after the snapshot began is not copied). Its schema version must be the
// binary's: an older one is a *SourceSchemaError, a newer one a
// *SchemaTooNewError. Its sealed credentials are checked against
// opts.Sealer (and opts.SourceSealer) before the destination is touched.
//
// The destination is written in one transaction: it takes the lock
// migrations take (serve applies migrations under it), creates the schema
// (the PostgreSQL migrations, recorded in outdial_schema as Migrate
// records them), checks that both schemas have the same tables and
// columns, streams each table's rows with COPY, referenced tables first,
// into the table without its keys and indexes, which are made once its rows
// are in (copydata_keys.go), and sets each identity's next value past both
// the largest id copied and the largest SQLite ever handed out
// (sqlite_sequence: ids of deleted rows are never reused), then analyzes
// the tables. Any failure, ctx's cancellation included, rolls it all back:
// the database is left as it was, empty. Memory does not grow with the
// tables' sizes: rows are streamed, never buffered.
func CopyData(ctx context.Context, fromPath, toURL string, opts CopyOptions) (*CopyReport, error) {
	report, err := copyData(ctx, fromPath, toURL, opts)
	if err != nil {
		return nil, fmt.Errorf("copy data: %w", err)
	}
	return report, nil
}

// copyData is CopyData, its errors not yet prefixed.
func copyData(ctx context.Context, fromPath, toURL string, opts CopyOptions) (*CopyReport, error) {
	start := time.Now()
	if opts.Sealer == nil {
		return nil, errors.New("no key for the destination's credentials")
	}
	if !IsDatabaseURL(toURL) {
		return nil, errors.New("the destination must be a PostgreSQL URL (postgres://USER:PASS@HOST:PORT/DB?sslmode=...)")
	}
	if st, err := os.Stat(fromPath); err != nil {
		return nil, fmt.Errorf("no database to copy: %w", err)
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a database file", fromPath)
	}
	if err := checkSourceVersion(ctx, fromPath); err != nil {
		return nil, err
	}
	src, err := openSource(ctx, fromPath)
	if err != nil {
		return nil, err
	}
	defer src.close()

	report := &CopyReport{}
	resealed, err := src.checkCredentials(ctx, opts, report)
	if err != nil {
		return nil, err
	}
	// Parsed as the nodes' pool parses it, so that the URL they use (with
	// pool_max_conns, say) works here too; one connection is enough.
	cfg, err := pgxpool.ParseConfig(toURL)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", redactURLError(err))
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	c := &copier{ctx: ctx, src: src, opts: opts, report: report, resealed: resealed}
	if err := pgx.BeginFunc(ctx, conn, c.run); err != nil {
		return nil, err
	}
	report.Elapsed = time.Since(start)
	return report, nil
}

// checkSourceVersion refuses a source not at the binary's schema version,
// before it is opened.
func checkSourceVersion(ctx context.Context, path string) error {
	v, err := SchemaVersion(ctx, path)
	if err != nil {
		return err
	}
	switch supported := SupportedSchemaVersion(); {
	case v > supported:
		return &SchemaTooNewError{Database: v, Supported: supported}
	case v < supported:
		return &SourceSchemaError{Version: v, Supported: supported}
	}
	return nil
}

// source is the SQLite database copied: one read-only connection holding
// one read transaction.
type source struct {
	db *sql.DB
	tx *sql.Tx
}

// openSource opens path read-only and begins the read transaction; the
// snapshot is taken by its first read, the schema version, checked again
// inside it.
func openSource(ctx context.Context, path string) (_ *source, err error) {
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("open source database: %w", err)
	}
	db.SetMaxOpenConns(1)
	s := &source{db: db}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.tx, err = db.BeginTx(ctx, nil); err != nil {
		return nil, fmt.Errorf("read source database: %w", err)
	}
	var v int
	if err := s.tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return nil, fmt.Errorf("read source database: %w", err)
	}
	if supported := SupportedSchemaVersion(); v != supported {
		return nil, &SourceSchemaError{Version: v, Supported: supported}
	}
	return s, nil
}

func (s *source) close() {
	if s.tx != nil {
		s.tx.Rollback() //nolint:errcheck // read-only: nothing to keep
	}
	s.db.Close() //nolint:errcheck // read-only: nothing to lose
}

// strings runs query, which returns one text column, in the snapshot.
func (s *source) strings(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := s.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read source database: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("read source database: %w", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read source database: %w", err)
	}
	return out, nil
}

// tables lists the source's tables (not SQLite's own), sorted.
func (s *source) tables(ctx context.Context) ([]string, error) {
	return s.strings(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
}

// columns lists table's columns in the source.
func (s *source) columns(ctx context.Context, table string) ([]string, error) {
	return s.strings(ctx, "SELECT name FROM pragma_table_info(?) ORDER BY cid", table)
}

// sequences returns sqlite_sequence: per AUTOINCREMENT table, the largest
// id it ever handed out.
func (s *source) sequences(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	var exists int
	if err := s.tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_sequence'").Scan(&exists); err != nil {
		return nil, fmt.Errorf("read source database: %w", err)
	}
	if exists == 0 {
		return out, nil
	}
	rows, err := s.tx.QueryContext(ctx, "SELECT name, seq FROM sqlite_sequence")
	if err != nil {
		return nil, fmt.Errorf("read source database: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var seq int64
		if err := rows.Scan(&name, &seq); err != nil {
			return nil, fmt.Errorf("read source database: %w", err)
		}
		out[name] = seq
	}
	return out, rows.Err()
}

// sealedCell names one sealed value of the source: a table's column in
// the row id.
type sealedCell struct {
	table, column string
	id            int64
}

// sealedColumns are the columns holding values sealed with the service's
// key, by table, and the additional data each is sealed with.
var sealedColumns = map[string]map[string]func(id int64) string{
	"telephony_configs": {"credentials": credentialsAD},
	"users": {
		"totp_secret":  func(id int64) string { return totpAD("totp_secret", id) },
		"totp_pending": func(id int64) string { return totpAD("totp_pending", id) },
	},
}

// checkCredentials opens every sealed value (telephony configurations'
// credentials, users' second-factor secrets): those that open with
// opts.Sealer are copied as they are, those that open only with
// opts.SourceSealer are re-sealed with opts.Sealer (returned by cell); any
// other fails the copy. It also counts the unfinished attempts
// (CopyReport.UnfinishedAttempts).
func (s *source) checkCredentials(ctx context.Context, opts CopyOptions, report *CopyReport) (map[sealedCell][]byte, error) {
	rows, err := s.tx.QueryContext(ctx, "SELECT id, organization_id, credentials FROM telephony_configs ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("read source database: %w", err)
	}
	defer rows.Close()
	resealed := map[sealedCell][]byte{}
	for rows.Next() {
		var id, org int64
		var sealed []byte
		if err := rows.Scan(&id, &org, &sealed); err != nil {
			return nil, fmt.Errorf("read source database: %w", err)
		}
		report.Credentials++
		if err := reseal(opts, sealedCell{"telephony_configs", "credentials", id}, sealed, resealed); err != nil {
			return nil, fmt.Errorf("the credentials of telephony configuration %d (organization %d) %w: nothing was copied", id, org, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read source database: %w", err)
	}
	if err := s.checkUserSecrets(ctx, opts, resealed); err != nil {
		return nil, err
	}
	report.Resealed = 0
	for cell := range resealed {
		if cell.table == "telephony_configs" {
			report.Resealed++
		}
	}
	if err := s.tx.QueryRowContext(ctx, "SELECT count(*) FROM call_attempts WHERE state IN ('dialing', 'in_flight')").Scan(&report.UnfinishedAttempts); err != nil {
		return nil, fmt.Errorf("read source database: %w", err)
	}
	return resealed, nil
}

// checkUserSecrets is checkCredentials for the users' second-factor
// secrets (a source of a schema before them has no users table: nothing to
// check).
func (s *source) checkUserSecrets(ctx context.Context, opts CopyOptions, resealed map[sealedCell][]byte) error {
	var n int
	if err := s.tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'users'").Scan(&n); err != nil || n == 0 {
		return err
	}
	rows, err := s.tx.QueryContext(ctx, "SELECT id, totp_secret, totp_pending FROM users ORDER BY id")
	if err != nil {
		return fmt.Errorf("read source database: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var secret, pending []byte
		if err := rows.Scan(&id, &secret, &pending); err != nil {
			return fmt.Errorf("read source database: %w", err)
		}
		for col, v := range map[string][]byte{"totp_secret": secret, "totp_pending": pending} {
			if v == nil {
				continue
			}
			if err := reseal(opts, sealedCell{"users", col, id}, v, resealed); err != nil {
				return fmt.Errorf("the second-factor secret of user %d %w: nothing was copied", id, err)
			}
		}
	}
	return rows.Err()
}

// reseal checks one sealed value: nothing to do when it opens with the
// cluster's key; re-sealed with it (into out) when it opens only with the
// data directory's; an error saying so otherwise.
func reseal(opts CopyOptions, cell sealedCell, sealed []byte, out map[sealedCell][]byte) error {
	ad := sealedColumns[cell.table][cell.column](cell.id)
	if _, err := opts.Sealer.Open(sealed, ad); err == nil {
		return nil
	}
	if opts.SourceSealer != nil {
		if plain, err := opts.SourceSealer.Open(sealed, ad); err == nil {
			out[cell] = opts.Sealer.Seal(plain, ad)
			return nil
		}
	}
	if opts.SourceSealer != nil {
		return errors.New("open with neither the cluster's key nor the data directory's")
	}
	return errors.New("do not open with the cluster's key")
}
