// Package realbin runs the real outdial binary for the benchmarks under
// bench/: it builds the binary, creates API keys with `outdial apikey
// create`, starts `outdial serve` as a subprocess on a free loopback port
// and waits until it answers, calls the HTTP API as a client would
// (presigned uploads included), and reads a process's CPU time and memory
// from /proc (Linux only).
//
// A benchmark is a program, not a library: every helper here treats an
// unexpected answer as fatal (log.Fatalf, or the Server's Fail, which adds
// the tail of the service's log) rather than returning an error to handle.
package realbin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Module is the import path of the outdial main package Build builds.
const Module = "github.com/outdial/outdial"

// GoBinary returns the go command to build with: the one on PATH (under
// `go run` that is the running toolchain's, which the go command puts
// first, GOTOOLCHAIN included), else $GOROOT/bin/go, else plain "go".
func GoBinary() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "go"
}

// Build builds the outdial binary into the file out. The error holds the
// compiler's output.
func Build(out string) error {
	cmd := exec.Command(GoBinary(), "build", "-o", out, Module)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, b)
	}
	return nil
}

// Workdir makes the benchmark's temporary directory (named after name) and,
// when bin is "", builds the binary into it, logging how long that took. It
// returns the directory, the binary and the function that removes the
// directory unless keep is set (then it logs where the directory is).
func Workdir(name string, keep bool, bin string) (dir, binary string, cleanup func(), err error) {
	dir, err = os.MkdirTemp("", name)
	if err != nil {
		return "", "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) } //nolint:errcheck // best effort
	if keep {
		log.Printf("temporary directory: %s", dir)
		cleanup = func() {}
	}
	if bin == "" {
		bin = filepath.Join(dir, "outdial")
		t := time.Now()
		if err := Build(bin); err != nil {
			cleanup()
			return "", "", nil, err
		}
		log.Printf("built %s in %.1f s", bin, time.Since(t).Seconds())
	}
	return dir, bin, cleanup, nil
}

// DBFile is the service's database in its data directory (cmd/root.go);
// SQLite keeps its write-ahead log beside it in DBFile + "-wal".
const DBFile = "outdial.db"

// DBSizes returns the sizes in bytes of the database file in data
// directory dataDir and of its WAL (0 for a file that does not exist).
func DBSizes(dataDir string) (db, wal int64) {
	size := func(path string) int64 {
		fi, err := os.Stat(path)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	p := filepath.Join(dataDir, DBFile)
	return size(p), size(p + "-wal")
}

// Env returns this process's environment without any OUTDIAL_ variable,
// with the variables of extra ("NAME=value") first: the service then sees
// only the settings the benchmark chose.
func Env(extra ...string) []string {
	env := append([]string(nil), extra...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OUTDIAL_") {
			env = append(env, kv)
		}
	}
	return env
}

// FreeAddr returns a loopback address ("127.0.0.1:port") with a port that
// was free a moment ago.
func FreeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// APIKey creates an API key for organization org (created on first use)
// in data directory dir with `bin apikey create` and returns the key, which
// the command prints alone on its last line. Any failure is fatal.
func APIKey(bin, dir, org string, env []string) string {
	cmd := exec.Command(bin, "apikey", "create", "--data", dir, "--org", org)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		log.Fatalf("apikey create: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// Server is a running `outdial serve` subprocess.
type Server struct {
	// Cmd is the process; Addr its listen address and Base the API's base
	// URL ("http://" + Addr).
	Cmd        *exec.Cmd
	Addr, Base string
	// LogPath is the file the service's stdout and stderr go to.
	LogPath string

	logFile *os.File
	exited  chan error
}

// Serve starts `bin serve --data dataDir --addr <free port> --log-level
// warn` plus args, with environment env, its output appended to logPath,
// and waits until GET /api/v1/health answers 200 (at most 30 s). Failing to
// start is fatal.
func Serve(bin, dataDir, logPath string, env []string, args ...string) *Server {
	addr := FreeAddr()
	all := append([]string{"serve", "--data", dataDir, "--addr", addr, "--log-level", "warn"}, args...)
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command(bin, all...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, logFile, logFile
	if err := cmd.Start(); err != nil {
		Fatalf("start serve: %v", err)
	}
	track(cmd.Process)
	s := &Server{Cmd: cmd, Addr: addr, Base: "http://" + addr, LogPath: logPath, logFile: logFile, exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()
	s.waitHealthy()
	return s
}

// Pid is the service's process id.
func (s *Server) Pid() int { return s.Cmd.Process.Pid }

// Exited delivers the process's exit status once it has exited (once).
func (s *Server) Exited() <-chan error { return s.exited }

// Fail kills the service (and any other process realbin started) and
// exits this program with the message and the tail of the service's log.
func (s *Server) Fail(format string, a ...any) {
	_ = s.Cmd.Process.Kill()
	b, _ := os.ReadFile(s.LogPath)
	Fatalf(format+"\nservice log:\n%s", append(a, Tail(b, 4000))...)
}

func (s *Server) waitHealthy() {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if res, err := http.Get(s.Base + "/api/v1/health"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-s.exited:
			s.Fail("serve exited: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.Fail("serve did not answer health within 30 s")
}

// Stop stops the service cleanly (SIGTERM: it finishes the requests under
// way and writes its CPU profile), killing it when it has not exited within
// timeout; it logs an exit error or the kill. It closes the log file.
func (s *Server) Stop(timeout time.Duration) {
	_ = s.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		if err != nil {
			log.Printf("serve exited with %v", err)
		}
	case <-time.After(timeout):
		_ = s.Cmd.Process.Kill()
		log.Printf("serve did not stop within %g s of SIGTERM", timeout.Seconds())
	}
	s.logFile.Close()
}

// Client returns a client of the service's API authenticated with key,
// failing through s.Fail.
func (s *Server) Client(key string) *Client {
	return &Client{Base: s.Base, Key: key, Fail: s.Fail}
}

// Client calls the API with an API key (X-API-Key); any answer but the
// expected status is fatal through Fail.
type Client struct {
	Base, Key string
	Fail      func(string, ...any)
}

// Send sends a request with the key, body (when not nil) as JSON, and
// returns the response for the caller to read and close.
func (c *Client) Send(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-API-Key", c.Key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return http.DefaultClient.Do(req)
}

// Do sends a request and returns its JSON object answer; any status but
// 200 is fatal.
func (c *Client) Do(method, path string, body any) map[string]any {
	res, err := c.Send(context.Background(), method, path, body)
	if err != nil {
		c.Fail("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		c.Fail("%s %s: status %d, %v: %s", method, path, res.StatusCode, err, Tail(b, 2000))
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		c.Fail("%s %s: %v", method, path, err)
	}
	return m
}

// Post is Do with POST.
func (c *Client) Post(path string, body any) map[string]any { return c.Do(http.MethodPost, path, body) }

// Get is Do with GET.
func (c *Client) Get(path string) map[string]any { return c.Do(http.MethodGet, path, nil) }

// Delete sends DELETE path; any status but 204 is fatal.
func (c *Client) Delete(path string) {
	res, err := c.Send(context.Background(), http.MethodDelete, path, nil)
	if err != nil {
		c.Fail("DELETE %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusNoContent {
		c.Fail("DELETE %s: status %d: %s", path, res.StatusCode, Tail(b, 2000))
	}
}

// Upload PUTs body to a presigned upload URL with Content-Type text/csv;
// any answer but 200 is fatal through fail.
func Upload(url string, body []byte, fail func(string, ...any)) {
	req, err := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		fail("%v", err)
	}
	req.Header.Set("Content-Type", "text/csv")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fail("upload: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		fail("upload: status %d: %s", res.StatusCode, b)
	}
}

// Tail returns the last n bytes of b (all of it when shorter).
func Tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
