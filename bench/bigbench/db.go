package main

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the driver the service uses

	"github.com/outdial/outdial/bench/internal/realbin"
)

// dbFile is the service's database in its data directory.
const dbFile = realbin.DBFile

// reader runs the benchmark's own queries on the service's database while
// the service runs: a read-only connection to the SQLite file, or on
// PostgreSQL the benchmark's connection (realbin.Database.SQL). Queries
// are written with ? placeholders, numbered for PostgreSQL.
type reader struct {
	db *sql.DB
	pg bool
}

// openReader opens the reader of the database d.
func openReader(d *realbin.Database) (*reader, error) {
	if d.Postgres() {
		return &reader{db: d.SQL(), pg: true}, nil
	}
	db, err := openDB(d.DataDir, true)
	if err != nil {
		return nil, err
	}
	return &reader{db: db}, nil
}

// rebind numbers the ? placeholders of query ($1, $2, ...) on PostgreSQL.
func (r *reader) rebind(query string) string {
	if !r.pg {
		return query
	}
	var b strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// queryRow runs a query of one row.
func (r *reader) queryRow(query string, args ...any) *sql.Row {
	return r.db.QueryRow(r.rebind(query), args...)
}

// count runs a SELECT of one integer.
func (r *reader) count(query string, args ...any) (int64, error) {
	var n int64
	err := r.queryRow(query, args...).Scan(&n)
	return n, err
}

// Close closes SQLite's connection; PostgreSQL's is the Database's.
func (r *reader) Close() {
	if !r.pg {
		r.db.Close()
	}
}

// openDB opens the service's SQLite database with modernc.org/sqlite,
// read-only (a pool of one connection, for polling while the service runs)
// or read-write (only while the service is stopped).
func openDB(dataDir string, readOnly bool) (*sql.DB, error) {
	dsn := "file:" + filepath.Join(dataDir, dbFile) + "?_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)"
	if readOnly {
		dsn += "&mode=ro"
	} else {
		dsn += "&_pragma=journal_mode(WAL)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, db.Ping()
}

// inList is "?, ?, ?" for n arguments.
func inList(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// remaining reports whether campaigns ids still have rows in the
// database (1 or 0 each): contacts, call attempts, the campaign rows.
func remaining(r *reader, ids []int64) (contacts, attempts, campaigns int64, err error) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	in := inList(len(ids))
	q := fmt.Sprintf(`SELECT CASE WHEN EXISTS (SELECT 1 FROM contacts WHERE campaign_id IN (%s)) THEN 1 ELSE 0 END,
		CASE WHEN EXISTS (SELECT 1 FROM call_attempts WHERE campaign_id IN (%s)) THEN 1 ELSE 0 END,
		CASE WHEN EXISTS (SELECT 1 FROM campaigns WHERE id IN (%s)) THEN 1 ELSE 0 END`, in, in, in)
	err = r.queryRow(q, append(append(append([]any{}, args...), args...), args...)...).Scan(&contacts, &attempts, &campaigns)
	return contacts, attempts, campaigns, err
}

// markAllBusy makes every contact of campaign id final with outcome busy,
// in one transaction, and truncates the WAL afterwards. The service must
// be stopped; SQLite only.
func markAllBusy(dataDir string, id int64) (int64, time.Duration, error) {
	db, err := openDB(dataDir, false)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	t := time.Now()
	res, err := db.Exec(`UPDATE contacts SET is_final = 1, outcome = 'busy' WHERE campaign_id = ?`, id)
	if err != nil {
		return 0, 0, fmt.Errorf("mark contacts busy: %w", err)
	}
	took := time.Since(t)
	n, _ := res.RowsAffected()
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return 0, 0, fmt.Errorf("checkpoint: %w", err)
	}
	return n, took, nil
}
