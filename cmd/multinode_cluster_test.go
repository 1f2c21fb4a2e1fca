package cmd_test

// The pieces of TestMultiNodeOnPostgres's cluster: the nodes (`outdial serve`
// processes on one PostgreSQL database), versitygw as their shared S3
// store, and the round-robin load balancer in front of them that
// --public-url names.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// clusterNode is one `outdial serve` process of the cluster. A node
// started again after it stopped keeps its name and address and logs into
// a new file.
type clusterNode struct {
	idx        int // the node's backend in the load balancer
	name, addr string
	args       []string // serve's arguments, --addr and --node-name included
	env        []string

	mu   sync.Mutex
	runs []*nodeRun // every process of this node, the last one current
}

// nodeRun is one process of a node.
type nodeRun struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error // valid once exited is closed
}

// launch starts the node's process (a new run) without waiting for it.
func (n *clusterNode) launch(t *testing.T, bin, logDir string) {
	t.Helper()
	n.mu.Lock()
	run := len(n.runs) + 1
	n.mu.Unlock()
	logPath := filepath.Join(logDir, fmt.Sprintf("%s-run%d.log", n.name, run))
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"serve"}, n.args...)...)
	cmd.Env = n.env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start %s: %v", n.name, err)
	}
	r := &nodeRun{cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		r.err = cmd.Wait()
		logFile.Close()
		close(r.exited)
	}()
	n.mu.Lock()
	n.runs = append(n.runs, r)
	n.mu.Unlock()
}

// ready waits until the node's current process answers health as itself
// on PostgreSQL. It fails t when the process exits first or does not
// answer within 30 s.
func (n *clusterNode) ready(t *testing.T) {
	t.Helper()
	r := n.current()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var health map[string]any
		res, err := client.Get("http://" + n.addr + "/api/v1/health")
		if err == nil {
			err = json.NewDecoder(res.Body).Decode(&health)
			res.Body.Close()
			if err == nil && res.StatusCode == http.StatusOK {
				if health["node"] != n.name || health["database"] != "postgres" {
					t.Fatalf("%s answers health %v, want node %q and database postgres", n.addr, health, n.name)
				}
				return
			}
		}
		select {
		case <-r.exited:
			t.Fatalf("%s exited before answering: %v\n%s", n.name, r.err, tail(r.logPath))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer health within 30 s:\n%s", n.name, tail(r.logPath))
		}
	}
}

// current is the node's last process.
func (n *clusterNode) current() *nodeRun {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.runs[len(n.runs)-1]
}

// signal sends sig to the node's current process.
func (n *clusterNode) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := n.current().cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v to %s: %v", sig, n.name, err)
	}
}

// kill sends SIGKILL to every process of the node still running (a
// stopped one too) and waits for them.
func (n *clusterNode) kill() {
	n.mu.Lock()
	runs := append([]*nodeRun(nil), n.runs...)
	n.mu.Unlock()
	for _, r := range runs {
		select {
		case <-r.exited:
			continue
		default:
		}
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
}

// logs returns the end of each of the node's logs, oldest process first.
func (n *clusterNode) logs() string {
	n.mu.Lock()
	runs := append([]*nodeRun(nil), n.runs...)
	n.mu.Unlock()
	var b bytes.Buffer
	for _, r := range runs {
		fmt.Fprintf(&b, "--- %s ---\n%s\n", filepath.Base(r.logPath), tail(r.logPath))
	}
	return b.String()
}

// tail returns the last 12 kB of a file.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 12000 {
		b = b[len(b)-12000:]
	}
	return string(b)
}

// lbProxy is a round-robin reverse proxy over the nodes the test marks up,
// as a load balancer with health checks would be: the test takes a node out
// of rotation before it kills, stops or pauses it, so only requests already
// under way at that node can be lost (502) or held.
type lbProxy struct {
	srv *httptest.Server

	mu       sync.Mutex
	backends []*url.URL
	up       []bool
	next     int
	failed   []string // requests answered 502, "METHOD path: error"
}

func startProxy(t *testing.T, addrs []string) *lbProxy {
	t.Helper()
	p := &lbProxy{up: make([]bool, len(addrs))}
	for _, a := range addrs {
		p.backends = append(p.backends, &url.URL{Scheme: "http", Host: a})
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			if u := p.pick(); u != nil {
				pr.SetURL(u)
			}
			pr.SetXForwarded()
			pr.Out.Host = pr.In.Host
		},
		Transport: &http.Transport{MaxIdleConnsPerHost: 64, ResponseHeaderTimeout: time.Minute},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.mu.Lock()
			p.failed = append(p.failed, fmt.Sprintf("%s %s: %v", r.Method, r.URL.Path, err))
			p.mu.Unlock()
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	p.srv = httptest.NewServer(rp)
	t.Cleanup(p.srv.Close)
	return p
}

// pick returns the next backend up, nil when none is (the request then
// fails with 502).
func (p *lbProxy) pick() *url.URL {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range p.backends {
		i := p.next % len(p.backends)
		p.next++
		if p.up[i] {
			return p.backends[i]
		}
	}
	return nil
}

// set puts backend i in rotation or takes it out.
func (p *lbProxy) set(i int, up bool) {
	p.mu.Lock()
	p.up[i] = up
	p.mu.Unlock()
}

// failures returns the requests answered 502 so far.
func (p *lbProxy) failures() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.failed...)
}

// findVersitygw locates the versitygw binary as store/objstore's test does:
// $OUTDIAL_VERSITYGW, then <repo>/.cache/bin/versitygw (.ci/versitygw.sh),
// then PATH; "" when there is none.
func findVersitygw() string {
	if p := os.Getenv("OUTDIAL_VERSITYGW"); p != "" {
		return p
	}
	if p, err := filepath.Abs(filepath.Join("..", ".cache", "bin", "versitygw")); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	return ""
}

// startVersitygw runs versitygw on a temporary directory and returns its
// host:port; it is killed when the test ends.
func startVersitygw(t *testing.T, bin, accessKey, secretKey string) string {
	t.Helper()
	addr := freeAddr(t)
	logPath := filepath.Join(t.TempDir(), "versitygw.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--port", addr, "posix", t.TempDir())
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+accessKey, "ROOT_SECRET_KEY="+secretKey)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start versitygw: %v", err)
	}
	exited := make(chan error, 1)
	go func() {
		exited <- cmd.Wait()
		logFile.Close()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	// It answers unsigned requests (403) once it listens.
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("versitygw exited: %v\n%s", err, tail(logPath))
		default:
		}
		res, err := client.Get("http://" + addr + "/")
		if err == nil {
			res.Body.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw not answering on %s: %v\n%s", addr, err, tail(logPath))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
