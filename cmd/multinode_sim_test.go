package cmd_test

// TestMultiNodeOnPostgres's view of the provider: one Twilio simulator (the account
// every node dials through), reached by each node through a front of its
// own (its OUTDIAL_TWILIO_API_URL), which records which node sent each
// create request and when it arrived.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// simCreate is one create request a node sent to the simulator.
type simCreate struct {
	node    string
	at      time.Time // when the request reached the simulator
	attempt int64     // the attempt id in the call's answer URL (0: none)
	to      string
	status  int    // the simulator's answer
	sid     string // the call created (201)
}

// dialLog records the create requests of every node.
type dialLog struct {
	sim *twiliosim.Server

	mu      sync.Mutex
	creates []simCreate
}

// front returns the base URL through which node reaches the simulator.
func (d *dialLog) front(t *testing.T, node string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/Calls.json") {
			d.sim.ServeHTTP(w, r)
			return
		}
		at := time.Now()
		_ = r.ParseForm() // the simulator's own ParseForm finds it parsed
		rec := &sniffer{ResponseWriter: w}
		d.sim.ServeHTTP(rec, r)
		c := simCreate{node: node, at: at, attempt: attemptOf(r.PostForm.Get("Url")), to: r.PostForm.Get("To"), status: rec.status}
		if rec.status == http.StatusCreated {
			var res struct {
				Sid string `json:"sid"`
			}
			_ = json.Unmarshal(rec.body.Bytes(), &res)
			c.sid = res.Sid
		}
		d.mu.Lock()
		d.creates = append(d.creates, c)
		d.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// placed returns the calls created (answered 201), in arrival order.
func (d *dialLog) placed() []simCreate {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]simCreate, 0, len(d.creates))
	for _, c := range d.creates {
		if c.status == http.StatusCreated {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

// firstAfter returns the first call placed after t by a node other than
// except ("" for any node).
func (d *dialLog) firstAfter(t time.Time, except string) (simCreate, bool) {
	for _, c := range d.placed() {
		if c.at.After(t) && c.node != except {
			return c, true
		}
	}
	return simCreate{}, false
}

// countBy counts the calls node placed after t.
func (d *dialLog) countBy(node string, t time.Time) int {
	n := 0
	for _, c := range d.placed() {
		if c.node == node && c.at.After(t) {
			n++
		}
	}
	return n
}

// busiestSecond is the largest number of calls placed within any second.
func (d *dialLog) busiestSecond() int {
	placed, most := d.placed(), 0
	for i, j := 0, 0; j < len(placed); j++ {
		for placed[j].at.Sub(placed[i].at) >= time.Second {
			i++
		}
		most = max(most, j-i+1)
	}
	return most
}

// attemptOf reads the attempt id from a call's answer URL
// (<public>/api/v1/telephony/twilio/answer/<id>?t=...).
func attemptOf(answerURL string) int64 {
	u, err := url.Parse(answerURL)
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(u.Path, '/')
	id, _ := strconv.ParseInt(u.Path[i+1:], 10, 64)
	return id
}

// sniffer keeps the status and body a handler answered, and passes
// flushes on (the simulator flushes its answer before its first webhook).
type sniffer struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (s *sniffer) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *sniffer) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	s.body.Write(b)
	return s.ResponseWriter.Write(b)
}

func (s *sniffer) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// peakInFlight is the largest number of the calls (the simulator's
// records) up together at the provider, each from its create until it
// ended ([Created, Ended)), leaving out those skip names by sid; the calls
// of that peak are returned. A call not ended counts until now. The
// service cannot learn of a call's end before it happens, so its own count
// of calls in flight is never below this.
func peakInFlight(calls []twiliosim.CallRecord, skip map[string]bool) (int, []twiliosim.CallRecord) {
	type edge struct {
		at    time.Time
		delta int
		i     int
	}
	var edges []edge
	now := time.Now()
	for i, c := range calls {
		if skip[c.SID] {
			continue
		}
		end := c.Ended
		if end.IsZero() {
			end = now
		}
		edges = append(edges, edge{c.Created, +1, i}, edge{end, -1, i})
	}
	// At equal times a call ending is counted before one starting.
	sort.Slice(edges, func(a, b int) bool {
		if !edges[a].at.Equal(edges[b].at) {
			return edges[a].at.Before(edges[b].at)
		}
		return edges[a].delta < edges[b].delta
	})
	peak, cur := 0, map[int]bool{}
	var at []twiliosim.CallRecord
	for _, e := range edges {
		if e.delta > 0 {
			cur[e.i] = true
		} else {
			delete(cur, e.i)
		}
		if len(cur) > peak {
			peak = len(cur)
			at = at[:0]
			for i := range cur {
				at = append(at, calls[i])
			}
		}
	}
	sort.Slice(at, func(a, b int) bool { return at[a].Created.Before(at[b].Created) })
	return peak, at
}
