package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

var keyLineRe = regexp.MustCompile(`^odk_[A-Za-z0-9_-]{43}$`)

// syncBuffer is a bytes.Buffer safe for a command writing while the test
// reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// run executes the root command with args and returns stdout, stderr and
// the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	return runCtx(context.Background(), args...)
}

func runCtx(ctx context.Context, args ...string) (string, string, error) {
	var out, errOut syncBuffer
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// clearEnv unsets every OUTDIAL_* variable for the test.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "OUTDIAL_") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
}

// createKey runs `apikey create` and returns the key from the last line.
func createKey(t *testing.T, args ...string) string {
	t.Helper()
	out, _, err := run(t, append([]string{"apikey", "create"}, args...)...)
	if err != nil {
		t.Fatalf("apikey create: %v", err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	last := lines[len(lines)-1]
	if !keyLineRe.MatchString(last) {
		t.Fatalf("last line %q does not match %s; output:\n%s", last, keyLineRe, out)
	}
	return last
}

// openData opens DATA/outdial.db, the database the commands under test made
// in dir: the commands run with --data, so this is the CLI's own database,
// not a throwaway one (it follows them to PostgreSQL when they take
// --database-url, API.md section 16).
func openData(t *testing.T, dir string) *store.DB {
	t.Helper()
	key, err := store.LoadOrCreateKey("", filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := store.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(dir, "outdial.db"), sealer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestAPIKeyCommands(t *testing.T) {
	clearEnv(t)
	dir := filepath.Join(t.TempDir(), "data")
	k1 := createKey(t, "--data", dir, "--org", "acme", "--name", "ci")
	k2 := createKey(t, "--data", dir, "--org", "acme")
	k3 := createKey(t, "--data", dir, "--org", "other")
	if k1 == k2 || k2 == k3 {
		t.Fatal("keys repeat")
	}
	db := openData(t, dir)
	p1, err := db.Authenticate(context.Background(), k1)
	if err != nil {
		t.Fatalf("created key does not authenticate: %v", err)
	}
	p2, _ := db.Authenticate(context.Background(), k2)
	p3, _ := db.Authenticate(context.Background(), k3)
	if p1.OrganizationID != p2.OrganizationID || p1.OrganizationID == p3.OrganizationID {
		t.Fatalf("organizations %d %d %d", p1.OrganizationID, p2.OrganizationID, p3.OrganizationID)
	}

	out, _, err := run(t, "apikey", "list", "--data", dir)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("list output:\n%s", out)
	}
	for i, k := range []string{k1, k2, k3} {
		if strings.Contains(out, k) {
			t.Fatalf("list shows a whole key:\n%s", out)
		}
		if !strings.Contains(lines[i+1], k[:10]) {
			t.Errorf("line %d lacks the prefix %s: %q", i+1, k[:10], lines[i+1])
		}
	}
	if !strings.Contains(lines[1], "acme") || !strings.Contains(lines[1], "ci") || !strings.Contains(lines[3], "other") {
		t.Errorf("list output:\n%s", out)
	}

	out, _, err = run(t, "apikey", "revoke", "1", "--data", dir)
	if err != nil || strings.TrimSpace(out) != "revoked api key 1" {
		t.Fatalf("revoke: %q, %v", out, err)
	}
	if _, err := db.Authenticate(context.Background(), k1); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("revoked key authenticates: %v", err)
	}
	out, _, _ = run(t, "apikey", "list", "--data", dir)
	if l := strings.Split(out, "\n")[1]; strings.HasSuffix(strings.TrimSpace(l), "-") {
		t.Errorf("revoked key shows no revocation time: %q", l)
	}

	errCases := []struct {
		args []string
		want string
	}{
		{[]string{"apikey", "revoke", "1"}, "not found"},
		{[]string{"apikey", "revoke", "99"}, "not found"},
		{[]string{"apikey", "revoke", "abc"}, "integer"},
		{[]string{"apikey", "revoke"}, "arg"},
		{[]string{"apikey", "create"}, `"org"`},
		{[]string{"apikey", "create", "--org", "  "}, "organization"},
		{[]string{"apikey", "list", "extra"}, "unknown command"},
		{[]string{"nope"}, "unknown command"},
	}
	for _, tc := range errCases {
		_, _, err := run(t, append(tc.args, "--data", dir)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	clearEnv(t)
	old := Version
	t.Cleanup(func() { Version = old })
	for _, v := range []string{"dev", "v1.2.3"} {
		Version = v
		out, _, err := run(t, "version")
		re := regexp.MustCompile(`^outdial ` + regexp.QuoteMeta(v) + ` \(commit (unknown|[0-9a-f]{12}(-dirty)?), go[0-9.]+\)\n$`)
		if err != nil || !re.MatchString(out) {
			t.Fatalf("version = %q, %v; want %s", out, err, re)
		}
	}
}

func TestEnvBinding(t *testing.T) {
	clearEnv(t)
	envDir := filepath.Join(t.TempDir(), "from-env")
	flagDir := filepath.Join(t.TempDir(), "from-flag")
	t.Setenv("OUTDIAL_DATA", envDir)
	createKey(t, "--org", "x")
	if _, err := os.Stat(filepath.Join(envDir, "outdial.db")); err != nil {
		t.Fatalf("OUTDIAL_DATA not used: %v", err)
	}
	// A flag on the command line beats the environment.
	createKey(t, "--org", "x", "--data", flagDir)
	if _, err := os.Stat(filepath.Join(flagDir, "outdial.db")); err != nil {
		t.Fatalf("--data not used: %v", err)
	}
	// Flags of subcommands bind too, dashes as underscores.
	t.Setenv("OUTDIAL_LOG_LEVEL", "loud")
	_, _, err := run(t, "serve", "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "log-level") {
		t.Fatalf("OUTDIAL_LOG_LEVEL not bound: %v", err)
	}
	t.Setenv("OUTDIAL_LOG_LEVEL", "")
	os.Unsetenv("OUTDIAL_LOG_LEVEL")
	t.Setenv("OUTDIAL_MAX_UPLOAD_BYTES", "lots")
	if _, _, err := run(t, "serve"); err == nil || !strings.Contains(err.Error(), "OUTDIAL_MAX_UPLOAD_BYTES") {
		t.Fatalf("bad OUTDIAL_MAX_UPLOAD_BYTES: %v", err)
	}
}

func TestSecretKeyFromEnv(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	t.Setenv("OUTDIAL_SECRET_KEY", "CQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQk=")
	createKey(t, "--org", "x", "--data", dir)
	if _, err := os.Stat(filepath.Join(dir, "secret.key")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("secret.key created although OUTDIAL_SECRET_KEY is set: %v", err)
	}
	t.Setenv("OUTDIAL_SECRET_KEY", "too-short")
	if _, _, err := run(t, "apikey", "list", "--data", dir); err == nil || strings.Contains(err.Error(), "too-short") {
		t.Fatalf("bad OUTDIAL_SECRET_KEY: %v", err)
	}
}

// startServe runs `serve` on a free port in dir and waits until it listens;
// it returns the base URL and a channel with the command's result.
func startServe(t *testing.T, ctx context.Context, dir string) (string, <-chan error, *syncBuffer) {
	t.Helper()
	var out, errOut syncBuffer
	root := newRoot()
	// Text logs, which the tests read (json is the default off a terminal:
	// TestServeLogFormat).
	root.SetArgs([]string{"serve", "--data", dir, "--addr", "127.0.0.1:0", "--log-format", "text"})
	root.SetOut(&out)
	root.SetErr(&errOut)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	addrRe := regexp.MustCompile(`msg="outdial listening" addr=(\S+)`)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := addrRe.FindStringSubmatch(errOut.String()); m != nil {
			return "http://" + m[1], done, &errOut
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended before listening: %v\n%s", err, errOut.String())
		case <-time.After(2 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not listen within 10s:\n%s", errOut.String())
	return "", nil, nil
}

func getJSON(t *testing.T, url, key string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, body
}

func waitDone(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v, want nil (exit 0)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10s")
	}
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != want {
		t.Errorf("%s mode = %v, want %v", filepath.Base(path), got, want)
	}
}

// TestServeFirstStartAndCancel starts serve on a data directory that does not
// exist: it creates the directory (0700), the database and secret.key (0600),
// answers health and authenticated requests, and stops cleanly (nil error,
// database closed: the WAL is checkpointed away) when its context ends.
func TestServeFirstStartAndCancel(t *testing.T) {
	clearEnv(t)
	dir := filepath.Join(t.TempDir(), "nested", "data")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done, logs := startServe(t, ctx, dir)

	checkMode(t, dir, 0o700)
	checkMode(t, filepath.Join(dir, "secret.key"), 0o600)
	checkMode(t, filepath.Join(dir, "outdial.db"), 0o600)

	status, body := getJSON(t, base+"/api/v1/health", "")
	if status != http.StatusOK || body["status"] != "ok" || body["version"] != Version {
		t.Fatalf("health = %d %v", status, body)
	}
	// A key created by the CLI while the server runs works at once.
	key := createKey(t, "--org", "acme", "--data", dir)
	status, body = getJSON(t, base+"/api/v1/organizations/telephony-configs", key)
	if status != http.StatusOK || fmt.Sprint(body["configurations"]) != "[]" {
		t.Fatalf("list = %d %v", status, body)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(filepath.Join(dir, "outdial.db"+suffix)); err == nil {
			checkMode(t, filepath.Join(dir, "outdial.db"+suffix), 0o600)
		}
	}

	cancel()
	waitDone(t, done)
	if !strings.Contains(logs.String(), "shutting down") {
		t.Errorf("no shutdown log:\n%s", logs.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "outdial.db-wal")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("WAL left after shutdown (database not closed cleanly): %v", err)
	}
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), 200*time.Millisecond); err == nil {
		t.Error("server still accepts connections after shutdown")
	}
	// Second start reuses the secret: the key still works.
	secret, _ := os.ReadFile(filepath.Join(dir, "secret.key"))
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	base, done, _ = startServe(t, ctx2, dir)
	if status, _ := getJSON(t, base+"/api/v1/organizations/telephony-configs", key); status != http.StatusOK {
		t.Fatalf("key after restart: status = %d, want %d", status, http.StatusOK)
	}
	cancel2()
	waitDone(t, done)
	if again, _ := os.ReadFile(filepath.Join(dir, "secret.key")); !bytes.Equal(again, secret) {
		t.Fatal("secret.key changed on restart")
	}
}

// TestServeSIGTERM sends the process SIGTERM while serve runs; serve catches
// it (the test process survives), finishes and returns nil.
func TestServeSIGTERM(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	_, done, logs := startServe(t, context.Background(), dir)
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitDone(t, done)
	if !strings.Contains(logs.String(), "shutting down") {
		t.Errorf("no shutdown log:\n%s", logs.String())
	}
}

func TestServeErrors(t *testing.T) {
	clearEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--data", dir, "--addr", ln.Addr().String()}, "listen"},
		{[]string{"serve", "--data", dir, "--log-level", "chatty"}, "log-level"},
		{[]string{"serve", "--data", dir, "extra"}, "unknown command"},
	}
	for _, tc := range tests {
		_, _, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want one containing %q", tc.args, err, tc.want)
		}
	}
	// A data path that is a file cannot be used.
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "serve", "--data", file, "--addr", "127.0.0.1:0"); err == nil {
		t.Error("serve accepted a file as data directory")
	}
}

// TestDataDirURICharacters: SQLite reads the database path as a URI, so a
// data directory with '?', '#' or '%' would put the database in another file
// (or fail); such a directory is refused with a clear error and nothing is
// created, while other unusual characters work.
func TestDataDirURICharacters(t *testing.T) {
	clearEnv(t)
	base := t.TempDir()
	for _, name := range []string{"q?x", "h#x", "p%41x"} {
		dir := filepath.Join(base, name)
		_, _, err := run(t, "apikey", "create", "--org", "x", "--data", dir)
		if err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("%s: err = %v, want a refusal", name, err)
		}
	}
	if entries, _ := os.ReadDir(base); len(entries) != 0 {
		t.Fatalf("files created for refused directories: %v", entries)
	}
	dir := filepath.Join(base, "with space & ünïcode")
	key := createKey(t, "--org", "x", "--data", dir)
	db := openData(t, dir)
	if _, err := db.Authenticate(context.Background(), key); err != nil {
		t.Fatalf("key in %q: %v", dir, err)
	}
}
