package cmd_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outdial/outdial/cmd"
)

// TestClusterExitStatuses runs the real binary: backup with a database URL
// exits 2 with the pg_dump line alone on stderr; serve refusing the bundled
// store beside --database-url exits 1 with its message. Neither reaches the
// database, nor prints its password.
func TestClusterExitStatuses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped with -short")
	}
	bin := cmd.BuildBinary(t)
	const pgURL = "postgres://outdial:pw-not-shown@127.0.0.1:1/outdial"
	dir := filepath.Join(t.TempDir(), "data")
	cases := []struct {
		name   string
		args   []string
		env    []string
		code   int
		stderr string
	}{
		{"backup --database-url", []string{"backup", "--data", dir, "--database-url", pgURL, "--to", filepath.Join(dir, "copy")}, nil, 2,
			"outdial backup: the database is PostgreSQL; back it up with pg_dump"},
		{"backup with OUTDIAL_DATABASE_URL", []string{"backup", "--data", dir}, []string{"OUTDIAL_DATABASE_URL=" + pgURL}, 2,
			"outdial backup: the database is PostgreSQL; back it up with pg_dump"},
		{"serve with the bundled store", []string{"serve", "--data", dir, "--database-url", pgURL, "--metrics-addr", ""}, nil, 1,
			"error: --database-url needs a remote S3 store that every node shares"},
		{"serve --lease-ttl 2s", []string{"serve", "--data", dir, "--lease-ttl", "2s", "--metrics-addr", ""}, nil, 1,
			"error: --lease-ttl must be at least 3s, got 2s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := exec.Command(bin, tc.args...)
			c.Env = append(serviceEnv("http://127.0.0.1:1"), tc.env...)
			var stdout, stderr strings.Builder
			c.Stdout, c.Stderr = &stdout, &stderr
			err := c.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != tc.code {
				t.Fatalf("exit = %v, want status %d; stderr %q", err, tc.code, stderr.String())
			}
			if lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], tc.stderr) {
				t.Fatalf("stderr = %q, want one line starting %q", stderr.String(), tc.stderr)
			}
			if stdout.Len() != 0 || strings.Contains(stderr.String(), "pw-not-shown") {
				t.Fatalf("stdout %q, stderr %q: want nothing on stdout and no password", stdout.String(), stderr.String())
			}
		})
	}
	if names, _ := filepath.Glob(dir); len(names) != 0 {
		t.Fatalf("the refused commands made %v", names)
	}
}
