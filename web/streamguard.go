package web

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/console"
)

// Defaults of the event streams' bounds (API.md 10, amended; serve's
// --max-streams-per-key, --max-streams-per-org and --max-streams).
const (
	DefaultStreamsPerKey = 20
	DefaultStreamsPerOrg = 100
	// DefaultMaxStreams is the bound on every stream together when the
	// connection cap gives none (StreamLimits.Total 0 and no cap).
	DefaultMaxStreams = 4096
	// credentialCheckEvery is how often the credentials of open streams
	// are checked: a revoked key's or ended session's streams end within
	// this, plus one query.
	credentialCheckEvery = 500 * time.Millisecond
	// credentialFailAfter is how long the check may keep failing (the
	// database unreadable) before every stream ends: a credential that
	// cannot be confirmed is not trusted for longer (fail closed; the
	// clients reconnect and authenticate afresh). A check that is only
	// slow (a loaded machine) is waited for, up to credentialCheckTimeout:
	// ending every stream because the host is busy would only add the
	// reconnections' load.
	credentialFailAfter    = 5 * time.Second
	credentialCheckTimeout = 5 * time.Second
)

// StreamLimits bound the open event streams. A stream is a connection that
// is never shed (it is answering), so without bounds one key could hold
// every connection the service has (issue 20).
type StreamLimits struct {
	// PerKey and PerOrg bound the streams opened with one API key (a
	// console session counts as its key) and by one organization; beyond,
	// 429. 0 means the default.
	PerKey, PerOrg int
	// Total bounds every stream together, leaving the rest of the
	// connection cap to ordinary requests; beyond, 503 with Retry-After.
	// 0 means DefaultMaxStreams.
	Total int
}

// withDefaults fills the zero fields.
func (l StreamLimits) withDefaults() StreamLimits {
	if l.PerKey <= 0 {
		l.PerKey = DefaultStreamsPerKey
	}
	if l.PerOrg <= 0 {
		l.PerOrg = DefaultStreamsPerOrg
	}
	if l.Total <= 0 {
		l.Total = DefaultMaxStreams
	}
	return l
}

// streamGuard admits event streams within StreamLimits and ends each one
// within about a second of its credential ceasing to authenticate (its API
// key revoked, its console session signed out or expired), whichever node
// or process did it: a goroutine, running only while streams are open,
// asks the database about every open stream's credential in one or two
// queries per credentialCheckEvery.
type streamGuard struct {
	db    *store.DB
	log   *slog.Logger
	lim   StreamLimits
	every time.Duration
	now   func() time.Time

	mu       sync.Mutex
	held     map[*stream]heldStream
	perKey   map[int64]int
	perOrg   map[int64]int
	byCred   map[credential]*credStreams // the credentials holding streams
	checking bool                        // the checker goroutine runs
}

// heldStream is an admitted stream's credential.
type heldStream struct {
	p    store.Principal
	cred credential
}

// credential is the SHA-256 of what a request authenticated with (an API
// key, or a console session's token), never stored: a request carrying
// the same value is the same credential, already authenticated when its
// first stream was admitted.
type credential [sha256.Size]byte

// credStreams counts one credential's open streams.
type credStreams struct {
	p store.Principal
	n int
}

// credentialOf returns the fingerprint of r's credential, as authenticate
// reads it (API key headers first, else the session cookie); ok is false
// when r carries none.
func credentialOf(r *http.Request) (c credential, ok bool) {
	if key := requestKey(r); key != "" {
		return sha256.Sum256([]byte("key\x00" + key)), true
	}
	if ck, err := r.Cookie(console.SessionCookie); err == nil && ck.Value != "" {
		return sha256.Sum256([]byte("session\x00" + ck.Value)), true
	}
	return credential{}, false
}

func newStreamGuard(db *store.DB, log *slog.Logger, lim StreamLimits) *streamGuard {
	return &streamGuard{db: db, log: log, lim: lim.withDefaults(), every: credentialCheckEvery, now: time.Now,
		held: map[*stream]heldStream{}, perKey: map[int64]int{}, perOrg: map[int64]int{}, byCred: map[credential]*credStreams{}}
}

// refuseKnown answers, before any authentication, a stream request whose
// credential already holds streams and whose key or organization is at its
// bound: a client that keeps asking for more streams than it may costs no
// database read (which ordinary requests of other organizations wait for).
// Other requests go on (nil). A credential revoked while holding streams
// may get this 429 instead of 401 until its streams end (within a second).
func (g *streamGuard) refuseKnown(w http.ResponseWriter, r *http.Request) error {
	c, ok := credentialOf(r)
	if !ok {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.byCred[c]
	if h == nil {
		return nil
	}
	return g.refusalLocked(w, h.p)
}

// admit counts st, opened by request r for p, against p's bounds, or
// answers why it cannot be opened (refusal). Every admitted stream must be
// released.
func (g *streamGuard) admit(w http.ResponseWriter, r *http.Request, st *stream, p store.Principal) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.refusalLocked(w, p); err != nil {
		return err
	}
	c, _ := credentialOf(r)
	g.held[st] = heldStream{p: p, cred: c}
	g.perKey[p.APIKeyID]++
	g.perOrg[p.OrganizationID]++
	if h := g.byCred[c]; h != nil {
		h.n++
	} else {
		g.byCred[c] = &credStreams{p: p, n: 1}
	}
	if !g.checking {
		g.checking = true
		go g.check()
	}
	return nil
}

// refusal answers what opening a stream for p would now (HEAD answers as
// GET would, holding nothing): nil, 429 when p's key or organization holds
// its most, 503 with Retry-After when the service does.
func (g *streamGuard) refusal(w http.ResponseWriter, p store.Principal) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refusalLocked(w, p)
}

func (g *streamGuard) refusalLocked(w http.ResponseWriter, p store.Principal) error {
	switch {
	case g.perKey[p.APIKeyID] >= g.lim.PerKey:
		return errStatus(http.StatusTooManyRequests, fmt.Sprintf(
			"this API key already holds %d open event streams, the most one key may (serve --max-streams-per-key); close one first",
			g.lim.PerKey))
	case g.perOrg[p.OrganizationID] >= g.lim.PerOrg:
		return errStatus(http.StatusTooManyRequests, fmt.Sprintf(
			"this organization already holds %d open event streams, the most one organization may (serve --max-streams-per-org); close one first",
			g.lim.PerOrg))
	case len(g.held) >= g.lim.Total:
		w.Header().Set("Retry-After", "5")
		return errStatus(http.StatusServiceUnavailable, fmt.Sprintf(
			"the service holds %d open event streams, its most (serve --max-streams); try again later", g.lim.Total))
	}
	return nil
}

// release forgets st (its request ends).
func (g *streamGuard) release(st *stream) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h, ok := g.held[st]
	if !ok {
		return
	}
	delete(g.held, st)
	decrement(g.perKey, h.p.APIKeyID)
	decrement(g.perOrg, h.p.OrganizationID)
	if c := g.byCred[h.cred]; c != nil {
		if c.n--; c.n <= 0 {
			delete(g.byCred, h.cred)
		}
	}
}

func decrement(m map[int64]int, k int64) {
	if m[k]--; m[k] <= 0 {
		delete(m, k)
	}
}

// open returns the number of admitted streams.
func (g *streamGuard) open() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.held)
}

// check runs while streams are open: every g.every it ends the streams
// whose credential no longer authenticates, and every stream once the
// check has failed for credentialFailAfter. It returns when none is open.
func (g *streamGuard) check() {
	var failingSince time.Time
	timer := time.NewTimer(g.every)
	defer timer.Stop()
	for range timer.C {
		streams, keys, sessions := g.snapshot()
		if len(streams) == 0 {
			return // snapshot cleared g.checking
		}
		ctx, cancel := context.WithTimeout(context.Background(), credentialCheckTimeout)
		liveKeys, liveSessions, err := g.db.LiveCredentials(ctx, keys, sessions)
		cancel()
		switch {
		case err != nil:
			if failingSince.IsZero() {
				failingSince = g.now()
			}
			if g.now().Sub(failingSince) >= credentialFailAfter {
				g.log.Warn("event streams ended: their credentials cannot be checked", slog.Int("streams", len(streams)),
					slog.String("error", err.Error()))
				for st := range streams {
					st.endWith("credentials cannot be checked")
				}
			}
		default:
			failingSince = time.Time{}
			for st, p := range streams {
				switch {
				case p.SessionID != 0 && !liveSessions[p.SessionID]:
					st.endWith("session ended")
				case p.SessionID == 0 && !liveKeys[p.APIKeyID]:
					st.endWith("API key revoked")
				}
			}
		}
		timer.Reset(g.every)
	}
}

// snapshot returns the open streams with their principals and the distinct
// key and session ids to check; with none open it marks the checker
// stopped, so that the next admit starts one.
func (g *streamGuard) snapshot() (map[*stream]store.Principal, []int64, []int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.held) == 0 {
		g.checking = false
		return nil, nil, nil
	}
	streams := make(map[*stream]store.Principal, len(g.held))
	var keys, sessions []int64
	seenKeys, seenSessions := map[int64]bool{}, map[int64]bool{}
	for st, h := range g.held {
		p := h.p
		streams[st] = p
		switch {
		case p.SessionID != 0 && !seenSessions[p.SessionID]:
			seenSessions[p.SessionID] = true
			sessions = append(sessions, p.SessionID)
		case p.SessionID == 0 && !seenKeys[p.APIKeyID]:
			seenKeys[p.APIKeyID] = true
			keys = append(keys, p.APIKeyID)
		}
	}
	return streams, keys, sessions
}
