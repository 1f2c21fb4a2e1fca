// Command copybench measures `outdial copy-data` (API.md 16: "a 1,000,000-
// contact campaign copies in minutes, not hours") through the real binary:
//
//	go run ./bench/copybench -database-url postgres://USER@HOST:PORT/postgres?sslmode=disable
//	go run ./bench/copybench -contacts 100000    # a quick check
//
// It writes a single host's data directory through the store, as serve
// would have: an organization with an API key, a Twilio configuration with
// credentials, a workflow and a campaign of -contacts contacts
// (store.CreateCampaign, realbin's distinct US numbers, three context
// columns). With -attempts (default on) the campaign has then run to its
// end: every contact final with one finished attempt (written with one SQL
// statement each, in SQLite, with the fields a real call leaves: provider
// call id, caller id, times, compliance evidence) and a log line per 100
// contacts. The data directory is closed (checkpointed) before the copy.
//
// Then it creates an empty database on the server of -database-url (a
// role that may create databases; default $OUTDIAL_TEST_DATABASE_URL), runs
// `outdial copy-data --from DATA --database-url URL` with the data
// directory's key as OUTDIAL_SECRET_KEY, and reports its wall time, its
// CPU time and peak RSS (the process's rusage: maximum resident set), the
// rows copied, the source's and the destination's sizes, with the machine's
// CPUs, Go version and load average. The database is dropped at the end
// unless -keep. PostgreSQL runs on the same machine unless the URL says
// otherwise, sharing its cores. Linux only (/proc, rusage).
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the source's raw writes

	"github.com/outdial/outdial/bench/internal/realbin"
	"github.com/outdial/outdial/store"
)

func main() {
	contacts := flag.Int("contacts", 1_000_000, "contacts of the campaign copied")
	attempts := flag.Bool("attempts", true, "every contact final with one finished attempt, a log line per 100 contacts")
	admin := flag.String("database-url", os.Getenv("OUTDIAL_TEST_DATABASE_URL"), "PostgreSQL URL of a role that may create databases")
	bin := flag.String("bin", "", "outdial binary (default: build one)")
	keep := flag.Bool("keep", false, "keep the temporary directory and the database")
	flag.Parse()
	if *admin == "" {
		log.Fatal("-database-url (or OUTDIAL_TEST_DATABASE_URL) is required")
	}
	if err := realbin.CheckNumbers(*contacts); err != nil {
		log.Fatal(err)
	}
	dir, binary, cleanup, err := realbin.Workdir("copybench", *keep, *bin)
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	data := filepath.Join(dir, "data")
	t := time.Now()
	key := writeSource(data, *contacts, *attempts)
	dbSize, walSize := realbin.DBSizes(data)
	log.Printf("wrote the data directory in %.1f s: outdial.db %.1f MB (WAL %d bytes)", time.Since(t).Seconds(), mb(dbSize), walSize)

	dest, drop := createDatabase(*admin)
	if !*keep {
		defer drop()
	} else {
		log.Printf("database kept: %s", dest)
	}
	cmd := exec.Command(binary, "copy-data", "--from", data, "--database-url", dest)
	cmd.Env = realbin.Env("OUTDIAL_SECRET_KEY=" + key)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		log.Fatalf("copy-data: %v\n%s", err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())

	fmt.Printf("%s", out)
	fmt.Printf("\nmachine: %d CPUs, %s, load average %s\n", runtime.NumCPU(), runtime.Version(), realbin.LoadAvg())
	fmt.Printf("source: %d contacts%s, outdial.db %.1f MB\n", *contacts, map[bool]string{true: " each with a finished attempt", false: ""}[*attempts], mb(dbSize))
	fmt.Printf("copy-data: %.1f s wall, %.1f s CPU, peak RSS %.1f MB\n", wall.Seconds(), cpu.Seconds(), float64(ru.Maxrss)/1024)
	fmt.Printf("destination: %.1f MB (pg_database_size)\n", mb(databaseSize(dest)))
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// writeSource writes the data directory data and returns its key (base64).
func writeSource(data string, n int, attempts bool) string {
	ctx := context.Background()
	if err := os.MkdirAll(data, 0o700); err != nil {
		log.Fatal(err)
	}
	keyPath := filepath.Join(data, "secret.key")
	key, err := store.LoadOrCreateKey("", keyPath)
	if err != nil {
		log.Fatal(err)
	}
	sealer, err := store.NewSealer(key)
	if err != nil {
		log.Fatal(err)
	}
	path := filepath.Join(data, realbin.DBFile)
	db, err := store.Open(ctx, path, sealer)
	if err != nil {
		log.Fatal(err)
	}
	k, _, err := db.CreateAPIKey(ctx, "bench", "", store.RoleAdmin)
	if err != nil {
		log.Fatal(err)
	}
	org := k.OrganizationID
	cfg, err := db.CreateTelephonyConfig(ctx, org, store.TelephonyConfig{Name: "twilio", Provider: "twilio", IsDefaultOutbound: true,
		Credentials: store.Credentials{"account_sid": "AC0123456789", "auth_token": "bench-token"}})
	if err != nil {
		log.Fatal(err)
	}
	def := []byte(`{"nodes":[{"id":"greet","type":"say","text":"Hello {{first_name}}"}]}`)
	w, err := db.CreateWorkflow(ctx, org, "main", def)
	if err != nil {
		log.Fatal(err)
	}
	t := time.Now()
	c, err := db.CreateCampaign(ctx, org, store.NewCampaign{
		Settings:   store.Settings{Name: "big", MaxConcurrency: 100, RateLimitPerSecond: 50},
		WorkflowID: w.ID, WorkflowName: w.Name, WorkflowDefinition: def,
		TelephonyConfigurationID: cfg.ID, TelephonyConfigurationName: cfg.Name, SourceID: "uploads/big.csv",
	}, func(add func(store.ContactInput) error) ([]string, error) {
		for i := range n {
			if err := add(store.ContactInput{Row: i + 2, PhoneNumber: realbin.Number(i), Timezone: "America/New_York",
				Context: map[string]string{"first_name": "Ada", "last_name": fmt.Sprintf("Lovelace-%d", i), "city": "Springfield"}}); err != nil {
				return nil, err
			}
		}
		return []string{"phone_number", "first_name", "last_name", "city"}, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("imported %d contacts in %.1f s", n, time.Since(t).Seconds())
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}
	if attempts {
		finish(path, c.ID)
	}
	return strings.TrimSpace(readFile(keyPath))
}

// finish makes campaign id's every contact final with one finished
// attempt, and adds a log line per 100 contacts, in one transaction.
func finish(path string, id int64) {
	t := time.Now()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ms := time.Now().UnixMilli()
	stmts := []string{
		// The lazy queue's first chunk of first attempts, replaced.
		`DELETE FROM call_attempts WHERE campaign_id = $1 AND $2 > 0`,
		`INSERT INTO call_attempts (campaign_id, contact_id, contact_row, attempt, state, priority, due_at, timezone, phone_number,
    outcome, raw_status, provider_call_id, caller_id, answered_by, sequence, started_at, answered_at, ended_at, deadline_at,
    duration_seconds, executed, compliance)
SELECT campaign_id, id, row_number, 1, 'done', 1, $2, timezone, phone_number,
    CASE id % 4 WHEN 0 THEN 'answered' WHEN 1 THEN 'busy' WHEN 2 THEN 'no_answer' ELSE 'voicemail' END,
    'completed', 'CA' || printf('%032x', id), '+14155552671', CASE id % 4 WHEN 0 THEN 'human' END, 4,
    $2, $2 + 3000, $2 + 33000, $2 + 3600000, 30, 1,
    '{"suppression":{"checked":true,"listed":false},"calling_hours":{"local_time":"10:00","zone":"America/New_York"}}'
FROM contacts WHERE campaign_id = $1`,
		`UPDATE contacts SET is_final = 1, attempts = 1, last_call_at = $2, duration_seconds = 30,
    outcome = CASE id % 4 WHEN 0 THEN 'answered' WHEN 1 THEN 'busy' WHEN 2 THEN 'no_answer' ELSE 'voicemail' END
WHERE campaign_id = $1`,
		`INSERT INTO campaign_logs (campaign_id, ts, level, event, message, details)
SELECT campaign_id, $2, 'info', 'call_ended', 'call to ' || phone_number || ' ended', '{"outcome":"answered"}'
FROM contacts WHERE campaign_id = $1 AND row_number % 100 = 0`,
		`UPDATE campaigns SET state = 'completed', queued_through_row = last_row, processed_rows = total_rows,
    executed_count = total_rows, total_queued_count = total_rows, completed_at = $2 WHERE id = $1`,
		`UPDATE campaign_zones SET queued = contacts WHERE campaign_id = $1`,
	}
	tx, err := db.Begin()
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := tx.Exec(s, id, ms); err != nil {
			log.Fatalf("%s: %v", s, err)
		}
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	log.Printf("finished every call in %.1f s", time.Since(t).Seconds())
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	return string(b)
}

// createDatabase creates copybench_<pid> on admin's server and returns its
// URL and the function that drops it.
func createDatabase(admin string) (string, func()) {
	u, err := url.Parse(admin)
	if err != nil {
		log.Fatal(err)
	}
	name := fmt.Sprintf("copybench_%d", os.Getpid())
	u.Path = "/" + name
	exec := func(q string) {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			log.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, q); err != nil {
			log.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE DATABASE " + name)
	return u.String(), func() { exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") }
}

// databaseSize is pg_database_size of the database at dest.
func databaseSize(dest string) int64 {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dest)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&n); err != nil {
		log.Fatal(err)
	}
	return n
}
