package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"

	_ "modernc.org/sqlite" // reads the fixture's schema version
)

// Fixture is the JSON written beside a fixture database; cmd's
// TestUpgradeFixtures reads the same shape.
type Fixture struct {
	Commit        string `json:"commit"`
	SchemaVersion int    `json:"schema_version"`
	// SecretKey is the OUTDIAL_SECRET_KEY the credentials are sealed with.
	SecretKey string `json:"secret_key"`
	// Keys are the organizations' API keys, by organization name.
	Keys map[string]string `json:"keys"`
	// Secrets are the configurations' sensitive fields as sent, by
	// organization and configuration name (the API masks them).
	Secrets map[string]map[string]map[string]string `json:"secrets"`
	// Requests are the GETs made after the set-up, in order.
	Requests []Recorded `json:"requests"`
}

// Recorded is one GET and the old binary's answer.
type Recorded struct {
	Org    string `json:"org"`
	Path   string `json:"path"`
	Status int    `json:"status"`
	// JSON is the answer of a JSON endpoint, Text a CSV report's.
	JSON json.RawMessage `json:"json,omitempty"`
	Text string          `json:"text,omitempty"`
}

// makeFixture runs bin on a fresh data directory, sets it up, records the
// reads and writes the fixture files of commit into out.
func makeFixture(ctx context.Context, work, out, bin, commit string) error {
	dir, err := os.MkdirTemp(work, "data-")
	if err != nil {
		return err
	}
	sim := twiliosim.Start(twiliosim.Config{Script: scriptByNumber})
	defer sim.Close()
	env := append(os.Environ(),
		"OUTDIAL_SECRET_KEY="+fixtureSecretKey,
		"OUTDIAL_TWILIO_API_URL="+sim.URL(),
		"OUTDIAL_METRICS_ADDR=", // no metrics listener (versions without it ignore the variable)
		"OUTDIAL_PUBLIC_URL=",
	)
	fx := &Fixture{Commit: commit, SecretKey: fixtureSecretKey, Keys: map[string]string{},
		Secrets: map[string]map[string]map[string]string{}}
	for _, org := range []string{"acme", "globex"} {
		key, err := createKey(ctx, bin, dir, env, org)
		if err != nil {
			return err
		}
		fx.Keys[org] = key
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	var logs bytes.Buffer
	serve := exec.CommandContext(ctx, bin, "serve", "--data", dir, "--addr", addr)
	serve.Env = env
	serve.Stdout, serve.Stderr = &logs, &logs
	if err := serve.Start(); err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			serve.Process.Kill() //nolint:errcheck // cleaning up after a failure
			serve.Wait()         //nolint:errcheck
		}
	}()
	base := "http://" + addr
	if err := waitHealth(ctx, base); err != nil {
		return fmt.Errorf("%w\n%s", err, logs.String())
	}
	c := &client{base: base, http: &http.Client{Timeout: 30 * time.Second}}
	if err := c.setUp(ctx, fx, sim); err != nil {
		return fmt.Errorf("set up: %w\n%s", err, logs.String())
	}
	if err := c.record(ctx, fx); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	// SIGTERM: the service closes the database cleanly (WAL checkpointed
	// and removed).
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	if err := serve.Wait(); err != nil {
		return fmt.Errorf("serve exit: %w\n%s", err, logs.String())
	}
	stopped = true
	dbPath := filepath.Join(dir, "outdial.db")
	if _, err := os.Stat(dbPath + "-wal"); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("a -wal file is left after a clean stop (%v)", err)
	}
	if fx.SchemaVersion, err = schemaVersion(dbPath); err != nil {
		return err
	}
	name := fmt.Sprintf("schema-%02d-%s", fx.SchemaVersion, commit[:12])
	if err := gzipFile(dbPath, filepath.Join(out, name+".db.gz")); err != nil {
		return err
	}
	b, err := json.MarshalIndent(fx, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, name+".json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	log.Printf("%s: wrote %s (.db.gz and .json), %d reads", commit[:12], name, len(fx.Requests))
	return nil
}

// createKey runs `apikey create` and returns the key (its last line).
func createKey(ctx context.Context, bin, dir string, env []string, org string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, "apikey", "create", "--org", org, "--name", "fixture", "--data", dir)
	cmd.Env = env
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("apikey create --org %s: %w", org, err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1], nil
}

// freeAddr returns a loopback address with a port free now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitHealth waits up to 20 s for base's /api/v1/health to answer 200.
func waitHealth(ctx context.Context, base string) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/health", nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("serve did not answer /api/v1/health within 20 s")
}

// schemaVersion reads PRAGMA user_version of the closed database.
func schemaVersion(path string) (int, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var v int
	err = db.QueryRow("PRAGMA user_version").Scan(&v)
	return v, err
}

// gzipFile writes src gzipped to dst.
func gzipFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(dst, b.Bytes(), 0o644)
}
