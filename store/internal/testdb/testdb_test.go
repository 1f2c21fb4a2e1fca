package testdb

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestWithDatabase(t *testing.T) {
	tests := []struct {
		admin, want string
	}{
		{"postgres://outdial:pw@127.0.0.1:5432/postgres?sslmode=disable", "postgres://outdial:pw@127.0.0.1:5432/outdial_test_ab?sslmode=disable"},
		{"postgresql://u@db.example:6000", "postgresql://u@db.example:6000/outdial_test_ab"},
		{"postgres://u:p%40ss@h/admin/?application_name=x&sslmode=require", "postgres://u:p%40ss@h/outdial_test_ab?application_name=x&sslmode=require"},
	}
	for _, tt := range tests {
		got, err := withDatabase(tt.admin, "outdial_test_ab")
		if err != nil {
			t.Fatalf("withDatabase(%q): %v", tt.admin, err)
		}
		if got != tt.want {
			t.Errorf("withDatabase(%q) = %q, want %q", tt.admin, got, tt.want)
		}
	}
	for _, bad := range []string{"host=127.0.0.1 dbname=postgres", "mysql://u@h/db", "postgres://h:port/x"} {
		if got, err := withDatabase(bad, "outdial_test_ab"); err == nil {
			t.Errorf("withDatabase(%q) = %q, want an error", bad, got)
		}
	}
}

func TestIsURL(t *testing.T) {
	for loc, want := range map[string]bool{
		"postgres://u:p@127.0.0.1:5432/outdial_test_ab?sslmode=disable": true,
		"postgresql://h/outdial_test_ab":                                true,
		"/tmp/TestX123/001/outdial.db":                                  false,
		"outdial.db":                                                    false,
		"":                                                              false,
	} {
		if got := IsURL(loc); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", loc, got, want)
		}
	}
}

func TestRandomName(t *testing.T) {
	a, err := randomName()
	if err != nil {
		t.Fatal(err)
	}
	b, err := randomName()
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatalf("two names are both %q", a)
	}
	if !strings.HasPrefix(a, "outdial_test_") || len(a) != len("outdial_test_")+16 {
		t.Fatalf("name = %q, want outdial_test_ and 16 hex digits", a)
	}
}

// TestLocationSQLite checks the file location: a database file not yet
// there, in a directory of the test's that is gone when the test ends.
func TestLocationSQLite(t *testing.T) {
	t.Setenv(EnvURL, "")
	if Postgres() {
		t.Fatal("Postgres() = true with the variable empty")
	}
	var loc string
	t.Run("test", func(t *testing.T) {
		loc = Location(t)
		if IsURL(loc) || !filepath.IsAbs(loc) || filepath.Base(loc) != "outdial.db" {
			t.Fatalf("location = %q, want an absolute path to outdial.db", loc)
		}
		if fi, err := os.Stat(filepath.Dir(loc)); err != nil || !fi.IsDir() {
			t.Fatalf("directory of %q: %v", loc, err)
		}
		if _, err := os.Stat(loc); !os.IsNotExist(err) {
			t.Fatalf("stat %q = %v, want not exist", loc, err)
		}
		if other := Location(t); other == loc {
			t.Fatalf("two calls both returned %q", loc)
		}
		checkRaw(t, loc)
		if _, err := os.Stat(loc); err != nil {
			t.Fatalf("Raw wrote no database file at %q: %v", loc, err)
		}
	})
	if _, err := os.Stat(filepath.Dir(loc)); !os.IsNotExist(err) {
		t.Fatalf("directory of %q after the test: %v, want not exist", loc, err)
	}
}

// TestLocationPostgres checks the server location: a new database that
// the test can connect to with the returned URL, dropped when the test
// ends even while a connection to it is still open.
func TestLocationPostgres(t *testing.T) {
	if !Postgres() {
		t.Skipf("%s is not set", EnvURL)
	}
	ctx := context.Background()
	admin := os.Getenv(EnvURL)
	var name string
	var leftOpen *pgx.Conn
	t.Run("test", func(t *testing.T) {
		loc := Location(t)
		if !IsURL(loc) {
			t.Fatalf("location = %q, want a URL", loc)
		}
		other := Location(t)
		if other == loc {
			t.Fatalf("two calls both returned %q", loc)
		}
		conn, err := pgx.Connect(ctx, loc)
		if err != nil {
			t.Fatalf("connect to %q: %v", loc, err)
		}
		leftOpen = conn // not closed: the drop must not wait for it
		if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		if want, err := withDatabase(admin, name); err != nil || loc != want || !strings.HasPrefix(name, "outdial_test_") {
			t.Fatalf("connected to %q through %q, want the admin URL with that database (%q, %v)", name, loc, want, err)
		}
		if n := countDatabases(t, admin, name); n != 1 {
			t.Fatalf("pg_database has %d rows named %q while the test runs, want 1", n, name)
		}
		var tables int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables); err != nil {
			t.Fatal(err)
		}
		if tables != 0 {
			t.Fatalf("new database has %d tables, want 0", tables)
		}
		checkRaw(t, loc)
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables); err != nil || tables != 1 {
			t.Fatalf("tables after Raw made one = %d, %v; want 1 (Raw on the same database)", tables, err)
		}
	})
	if leftOpen != nil {
		// Ended by the drop; its close may report that.
		_ = leftOpen.Close(ctx)
	}
	if name == "" {
		t.Fatal("the subtest found no database")
	}
	if n := countDatabases(t, admin, name); n != 0 {
		t.Fatalf("pg_database has %d rows named %q after the test, want 0", n, name)
	}
}

// checkRaw makes a table through Raw(t, loc), writes a row with a $1
// parameter and reads it back.
func checkRaw(t *testing.T, loc string) {
	t.Helper()
	raw := Raw(t, loc)
	if _, err := raw.Exec("CREATE TABLE raw_check (id INTEGER PRIMARY KEY, name TEXT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("INSERT INTO raw_check (id, name) VALUES ($1, $2)", 7, "seven"); err != nil {
		t.Fatal(err)
	}
	var name string
	if err := raw.QueryRow("SELECT name FROM raw_check WHERE id = $1", 7).Scan(&name); err != nil || name != "seven" {
		t.Fatalf("row read back = %q, %v; want seven", name, err)
	}
}

// TestNewLocation checks the location of a store shared by a package's
// tests: outdial.db in the given directory on SQLite, a database that drop
// removes on PostgreSQL.
func TestNewLocation(t *testing.T) {
	dir := t.TempDir()
	loc, drop, err := NewLocation(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !Postgres() {
		if loc != filepath.Join(dir, "outdial.db") {
			t.Fatalf("location = %q, want outdial.db in %s", loc, dir)
		}
		if err := drop(); err != nil {
			t.Fatalf("drop: %v", err)
		}
		return
	}
	admin := os.Getenv(EnvURL)
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if want, err := withDatabase(admin, name); err != nil || want != loc || !strings.HasPrefix(name, "outdial_test_") {
		t.Fatalf("location = %q, want the admin URL with a database outdial_test_… (%q, %v)", loc, want, err)
	}
	if n := countDatabases(t, admin, name); n != 1 {
		t.Fatalf("pg_database has %d rows named %q before drop, want 1", n, name)
	}
	if err := drop(); err != nil {
		t.Fatalf("drop: %v", err)
	}
	if n := countDatabases(t, admin, name); n != 0 {
		t.Fatalf("pg_database has %d rows named %q after drop, want 0", n, name)
	}
}

func countDatabases(t *testing.T, admin, name string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
