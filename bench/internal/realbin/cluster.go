package realbin

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ClusterConfig says how StartCluster starts a benchmark's serve
// processes.
type ClusterConfig struct {
	// Bin is the outdial binary, DB the database every node uses.
	Bin string
	DB  *Database
	// Nodes is how many serve processes share DB: 1, or more on
	// PostgreSQL only (a SQLite file belongs to one process).
	Nodes int
	// Dir is the benchmark's temporary directory: the nodes' data
	// directories and logs go there.
	Dir string
	// Env is every node's environment (DB.Env's).
	Env []string
	// Args returns more serve flags for node i (1 to Nodes); nil: none.
	Args func(i int) []string
}

// Cluster is a benchmark's running serve processes. On SQLite it is one
// process started exactly as Serve starts it on DB.DataDir, its log in
// Dir/serve.log. On PostgreSQL node i runs with DB's flags (ServeArgs),
// --node-name nodeI, its own data directory Dir/nodeI and log
// Dir/serve-nodeI.log; with more than one node they sit behind a
// round-robin Proxy, which is their --public-url (the simulator's webhooks
// go through it) and the base of the benchmark's API calls.
type Cluster struct {
	// Nodes are the processes, Names their --node-name ("" on SQLite).
	Nodes []*Server
	Names []string
	// Base is the API's base URL and Addr its host:port: the proxy's with
	// several nodes, else the one node's.
	Base, Addr string
	// Proxy is the load balancer (nil with one node).
	Proxy *Proxy

	db *Database
}

// StartCluster starts cfg.Nodes serve processes one after the other (the
// first applies the migrations), each once the previous answers health.
// Failing to start is fatal.
func StartCluster(cfg ClusterConfig) *Cluster {
	if cfg.Nodes < 1 || (cfg.Nodes > 1 && !cfg.DB.Postgres()) {
		Fatalf("-nodes %d: one node, or several on PostgreSQL (-database-url): a SQLite file belongs to one process", cfg.Nodes)
	}
	c := &Cluster{db: cfg.DB}
	args := func(i int) []string {
		if cfg.Args == nil {
			return nil
		}
		return cfg.Args(i)
	}
	if !cfg.DB.Postgres() {
		s := Serve(cfg.Bin, cfg.DB.DataDir, filepath.Join(cfg.Dir, "serve.log"), cfg.Env, args(1)...)
		c.Nodes, c.Names, c.Base, c.Addr = []*Server{s}, []string{""}, s.Base, s.Addr
		return c
	}
	if cfg.Nodes > 1 {
		c.Proxy = StartProxy()
		c.Base, c.Addr = c.Proxy.Base, c.Proxy.Addr
	}
	for i := 1; i <= cfg.Nodes; i++ {
		name := fmt.Sprintf("node%d", i)
		a := append(cfg.DB.ServeArgs(), "--node-name", name)
		if c.Proxy != nil {
			a = append(a, "--public-url", c.Proxy.Base)
		}
		s := Serve(cfg.Bin, filepath.Join(cfg.Dir, name), filepath.Join(cfg.Dir, "serve-"+name+".log"), cfg.Env, append(a, args(i)...)...)
		c.Nodes = append(c.Nodes, s)
		c.Names = append(c.Names, name)
		if c.Proxy != nil {
			c.Proxy.Add(s.Addr)
		} else {
			c.Base, c.Addr = s.Base, s.Addr
		}
	}
	return c
}

// Client returns a client of the cluster's API (Base) authenticated with
// key, failing through c.Fail.
func (c *Cluster) Client(key string) *Client {
	return &Client{Base: c.Base, Key: key, Fail: c.Fail}
}

// Fail kills every node and what the benchmark started (versitygw) and
// exits with the message and the tail of each node's log.
func (c *Cluster) Fail(format string, a ...any) {
	var logs strings.Builder
	for i, s := range c.Nodes {
		_ = s.Cmd.Process.Kill()
		b, _ := os.ReadFile(s.LogPath)
		n := 4000 / len(c.Nodes)
		if c.Names[i] != "" {
			fmt.Fprintf(&logs, "--- %s (%s) ---\n", c.Names[i], filepath.Base(s.LogPath))
		}
		logs.WriteString(Tail(b, max(n, 1500)))
	}
	Fatalf(format+"\nservice log:\n%s", append(a, logs.String())...)
}

// Pids are the nodes' process ids.
func (c *Cluster) Pids() []int {
	pids := make([]int, len(c.Nodes))
	for i, s := range c.Nodes {
		pids[i] = s.Pid()
	}
	return pids
}

// CPU is the user + system CPU time all nodes have used.
func (c *Cluster) CPU() time.Duration {
	var d time.Duration
	for _, s := range c.Nodes {
		d += ProcCPU(s.Pid())
	}
	return d
}

// StatusKB is each node's kB field of /proc/<pid>/status (VmRSS, VmHWM).
func (c *Cluster) StatusKB(field string) []int64 {
	kb := make([]int64, len(c.Nodes))
	for i, s := range c.Nodes {
		kb[i] = ProcStatusKB(s.Pid(), field)
	}
	return kb
}

// SampleRSS samples every node's VmRSS every interval (RSSSampler);
// End on each gives its peak.
func (c *Cluster) SampleRSS(interval time.Duration) []*RSSSampler {
	ss := make([]*RSSSampler, len(c.Nodes))
	for i, s := range c.Nodes {
		ss[i] = SampleRSS(s.Pid(), interval)
	}
	return ss
}

// EndRSS ends samplers and returns their peaks in kB.
func EndRSS(ss []*RSSSampler) []int64 {
	kb := make([]int64, len(ss))
	for i, s := range ss {
		kb[i] = s.End()
	}
	return kb
}

// PerNodeMB formats kB figures per node: "61.2 MB" for one node,
// "node1 61.2, node2 58.0 MB" for several.
func (c *Cluster) PerNodeMB(kb []int64) string {
	if len(kb) == 1 {
		return fmt.Sprintf("%.1f MB", float64(kb[0])/1024)
	}
	parts := make([]string, len(kb))
	for i, v := range kb {
		parts[i] = fmt.Sprintf("%s %.1f", c.Names[i], float64(v)/1024)
	}
	return strings.Join(parts, ", ") + " MB"
}

// Stop stops every node at once (Server.Stop with timeout each), then the
// proxy.
func (c *Cluster) Stop(timeout time.Duration) {
	var wg sync.WaitGroup
	for _, s := range c.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Stop(timeout)
		}()
	}
	wg.Wait()
	if c.Proxy != nil {
		c.Proxy.Close()
	}
}

// tracked are the child processes a fatal exit kills (Fatalf): without
// it, an exit on failure would leave versitygw and the other nodes
// running.
var tracked struct {
	sync.Mutex
	procs []*os.Process
}

func track(p *os.Process) {
	tracked.Lock()
	tracked.procs = append(tracked.procs, p)
	tracked.Unlock()
}

// KillChildren kills every serve and versitygw process realbin started
// (those that already exited are skipped by the kernel).
func KillChildren() {
	tracked.Lock()
	defer tracked.Unlock()
	for _, p := range tracked.procs {
		_ = p.Kill()
	}
}

// Fatalf kills the processes realbin started (KillChildren) and exits
// with the message, as log.Fatalf.
func Fatalf(format string, a ...any) {
	KillChildren()
	log.Fatalf(format, a...)
}
