package dialer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Waiting for other nodes' requests under way (API.md 16). Two answers
// promise that no provider request leaves after them, on any node:
//
//   - a suppression addition (12.1): a number added on one node is never
//     called by any node after the add answered. Each node's suppression
//     gate (guard.go) covers its own requests; the node that stored the
//     addition asks every other node that may be placing the
//     organization's calls (one holding a lease on one of its campaigns)
//     to cycle its gate, and waits for each one's answer. A node that takes
//     a lease after the addition committed checks the list with the
//     addition in it.
//   - a pause or a cancel (4.4): the node that stored it asks the node
//     dialing the campaign, if another, to halt it (Halt's wait for the
//     requests under way), and waits for its answer. Claims after the
//     transition committed find the campaign stopped (their fencing check).
//
// An ask is a notification with a token; the answer is a notification
// with the same token.

const (
	noteSuppressed = "a" // organization id: numbers were added to its list (extra: the token); cycle the gate
	noteHaltAsked  = "p" // campaign id: paused or cancelled (extra: the token); halt it
	noteAnswered   = "k" // the id asked about: done (extra: the token of the ask)
)

// gateAskEvery is how often the ask is sent again while answers are
// missing (a node whose listener was reconnecting missed it).
const gateAskEvery = time.Second

// gateWaits are the asks of this node waiting for other nodes' answers.
type gateWaits struct {
	mu sync.Mutex
	m  map[string]chan string // token → the answering nodes
}

// awaitSuppressed returns once every other node holding a lease on one of
// org's campaigns has cycled its suppression gate (awaitNodes).
func (e *Engine) awaitSuppressed(ctx context.Context, org int64) {
	if !e.db.Shared() {
		return
	}
	nodes, err := e.db.OrganizationLeaseNodes(ctx, org)
	e.awaitNodes(ctx, noteSuppressed, org, nodes, err)
}

// awaitHalted returns once the node holding campaign id's lease, if
// another, has halted it (awaitNodes).
func (e *Engine) awaitHalted(ctx context.Context, id int64) {
	if !e.db.Shared() {
		return
	}
	node, err := e.db.DialedBy(ctx, id)
	var nodes []string
	if node != "" {
		nodes = []string{node}
	}
	e.awaitNodes(ctx, noteHaltAsked, id, nodes, err)
}

// awaitNodes asks nodes (this one left out) to do what kind asks about id
// and returns once each answered, or after the lease TTL: by then a node
// that could not hear the ask could not renew its leases either, and has
// stopped sending requests. err is the error finding the nodes: then the
// wait is the lease TTL.
func (e *Engine) awaitNodes(ctx context.Context, kind string, id int64, nodes []string, err error) {
	if err != nil {
		e.log.Warn("dialer: find the nodes dialing; waiting the lease TTL", slog.String("ask", kind),
			slog.Int64("id", id), slog.String("error", err.Error()))
		wait(ctx, e.leaseTTL())
		return
	}
	pending := map[string]bool{}
	for _, n := range nodes {
		if n != e.cfg.Node {
			pending[n] = true
		}
	}
	if len(pending) == 0 {
		return
	}
	token := gateToken()
	answers := make(chan string, len(pending)*4)
	w := &e.gateWaits
	w.mu.Lock()
	if w.m == nil {
		w.m = map[string]chan string{}
	}
	w.m[token] = answers
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.m, token)
		w.mu.Unlock()
	}()

	e.notify(ctx, kind, id, token)
	ask := time.NewTicker(gateAskEvery)
	defer ask.Stop()
	limit := time.NewTimer(e.leaseTTL())
	defer limit.Stop()
	for len(pending) > 0 {
		select {
		case n := <-answers:
			delete(pending, n)
		case <-ask.C:
			e.notify(ctx, kind, id, token)
		case <-limit.C:
			e.log.Warn("dialer: nodes did not answer within the lease TTL", slog.String("ask", kind),
				slog.Int64("id", id), slog.String("nodes", strings.Join(keys(pending), ",")))
			return
		case <-ctx.Done():
			return
		}
	}
}

// answerAsk does what another node asked (kind, about id) and answers:
// cycles org id's suppression gate (its requests that checked the list
// before have been answered), or halts campaign id here. It runs beside
// the listener (counted with it: the listener's goroutine is running, so
// the count cannot be waited to zero meanwhile).
func (e *Engine) answerAsk(ctx context.Context, kind string, id int64, token string) {
	e.leases.done.Add(1)
	go func() {
		defer e.leases.done.Done()
		if kind == noteSuppressed {
			e.cycleGate(id)
		} else {
			e.haltHere(id)
		}
		e.notify(ctx, noteAnswered, id, token)
	}()
}

// answered records node's answer to this node's ask token.
func (e *Engine) answered(token, node string) {
	w := &e.gateWaits
	w.mu.Lock()
	ch := w.m[token]
	w.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case ch <- node:
	default: // full of repeated answers: the wait has what it needs
	}
}

func gateToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
