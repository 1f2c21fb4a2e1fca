package realbin

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy is a round-robin reverse proxy over serve nodes, as a load
// balancer in front of a cluster is (API.md 16: --public-url reaches any
// live node). It runs in the benchmark's process, so its CPU time is the
// benchmark's (SelfCPU). It keeps the Host header the client sent, which
// the providers' webhook signatures cover, and flushes event streams at
// once (httputil.ReverseProxy does for text/event-stream).
type Proxy struct {
	// Addr is its listen address and Base its URL ("http://" + Addr).
	Addr, Base string

	srv      *http.Server
	mu       sync.Mutex
	backends []*url.URL
	next     int
	failed   atomic.Int64 // requests answered 502
	lastErr  atomic.Value // the last proxying error, a string
	requests atomic.Int64
}

// StartProxy listens on a free loopback port and proxies to the backends
// added with Add (a request before the first Add answers 502).
func StartProxy() *Proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String()}
	p.Base = "http://" + p.Addr
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			p.requests.Add(1)
			if u := p.pick(); u != nil {
				pr.SetURL(u)
			}
			pr.SetXForwarded()
			pr.Out.Host = pr.In.Host
		},
		// The simulator posts five webhooks a call at up to 1,000 calls a
		// second: keep enough idle connections to every node.
		Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute,
			DisableCompression: true},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.failed.Add(1)
			p.lastErr.Store(fmt.Sprintf("%s %s: %v", r.Method, r.URL.Path, err))
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(ln) //nolint:errcheck // ends with Close
	return p
}

// Add puts the node listening at addr (host:port) in the rotation.
func (p *Proxy) Add(addr string) {
	p.mu.Lock()
	p.backends = append(p.backends, &url.URL{Scheme: "http", Host: addr})
	p.mu.Unlock()
}

func (p *Proxy) pick() *url.URL {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.backends) == 0 {
		return nil
	}
	u := p.backends[p.next%len(p.backends)]
	p.next++
	return u
}

// String describes what the proxy did: requests, and those it answered
// 502 with the last error.
func (p *Proxy) String() string {
	p.mu.Lock()
	n := len(p.backends)
	p.mu.Unlock()
	s := fmt.Sprintf("round-robin proxy at %s over %d nodes: %d requests, %d answered 502",
		p.Addr, n, p.requests.Load(), p.failed.Load())
	if e, ok := p.lastErr.Load().(string); ok {
		s += " (last: " + e + ")"
	}
	return s
}

// Close stops the proxy (open connections too).
func (p *Proxy) Close() { p.srv.Close() }
