package web

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/store"
)

// The live event streams (API.md 10) are fed by the engine's own changes
// (dialer.Engine.Watch), never by a polling loop per stream:
//
//   - the hub receives every change on the engine's goroutines and only notes
//     it: a call's end in the campaign's calls-per-minute ring, and, when
//     the campaign is watched, in its feed, which it wakes;
//   - one feed per watched campaign (eventfeed.go) reads what changed once
//     for all its subscribers (new log entries, the counters' row, the
//     diagnosis at most every diagnosisEvery) at most twice a second, and
//     hands the result to each stream without ever blocking;
//   - each stream (events.go) is the request's own goroutine, writing what
//     its feed handed it; a client that does not read only fills its own
//     bounded buffer (calls beyond it are counted in calls_skipped, logs
//     beyond it end the stream so that the client reconnects with
//     Last-Event-ID and is replayed from the database).
type eventHub struct {
	db     *store.DB
	dialer *dialer.Engine
	log    *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	feeds   map[int64]*feed                // watched campaigns
	orgs    map[int64]map[*stream]struct{} // organization-wide streams
	orgOf   map[int64]int64                // campaigns' organizations, once read
	rates   map[int64]*minuteRing          // call ends of the last minute, every campaign
	closing chan struct{}                  // closed by close: every stream ends
	closed  bool
}

func newEventHub(db *store.DB, d *dialer.Engine, log *slog.Logger) *eventHub {
	h := &eventHub{db: db, dialer: d, log: log, now: time.Now, feeds: map[int64]*feed{},
		orgs: map[int64]map[*stream]struct{}{}, orgOf: map[int64]int64{}, rates: map[int64]*minuteRing{},
		closing: make(chan struct{})}
	d.Watch(h.onChange)
	return h
}

// onChange is the engine's Watcher: it notes c and returns at once.
func (h *eventHub) onChange(c dialer.Change) {
	h.mu.Lock()
	if c.Ended != nil {
		r := h.rates[c.CampaignID]
		if r == nil {
			if len(h.rates) >= 1024 {
				h.sweepRatesLocked(c.Ended.EndedAt)
			}
			r = &minuteRing{}
			h.rates[c.CampaignID] = r
		}
		r.add(c.Ended.EndedAt)
	}
	f := h.feedForLocked(c.CampaignID)
	h.mu.Unlock()
	if f != nil {
		f.note(c.Ended)
	}
}

// touch reports a change the API made to campaign id (a transition, new
// settings): its streams get a snapshot soon.
func (h *eventHub) touch(id int64) {
	h.mu.Lock()
	f := h.feedForLocked(id)
	h.mu.Unlock()
	if f != nil {
		f.note(nil)
	}
}

// feedForLocked returns campaign id's feed: the existing one, or a new one
// when organization-wide streams may want it (the campaign's organization
// is not known yet, or has streams); nil when nobody watches it.
func (h *eventHub) feedForLocked(id int64) *feed {
	if f := h.feeds[id]; f != nil || h.closed {
		return f
	}
	if len(h.orgs) == 0 {
		return nil
	}
	org, known := h.orgOf[id]
	if known && len(h.orgs[org]) == 0 {
		return nil
	}
	return h.startFeedLocked(id, org)
}

// startFeedLocked starts campaign id's feed (org 0: read it first).
func (h *eventHub) startFeedLocked(id, org int64) *feed {
	f := newFeed(h, id, org)
	h.feeds[id] = f
	go f.run()
	return f
}

// subscribe attaches s to campaign id of organization org and returns once
// the feed knows where the campaign's log stands, so a replay read after it
// leaves no gap.
func (h *eventHub) subscribe(ctx context.Context, id, org int64, s *stream) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return errStatus(http.StatusServiceUnavailable, "the service is shutting down")
	}
	h.orgOf[id] = org
	f := h.feeds[id]
	if f == nil {
		f = h.startFeedLocked(id, org)
	}
	f.attach(s)
	h.mu.Unlock()
	select {
	case <-f.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// subscribeOrg attaches s to every campaign of organization org: ids are
// the campaigns whose snapshot it gets at once.
func (h *eventHub) subscribeOrg(org int64, ids []int64, s *stream) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errStatus(http.StatusServiceUnavailable, "the service is shutting down")
	}
	if h.orgs[org] == nil {
		h.orgs[org] = map[*stream]struct{}{}
	}
	h.orgs[org][s] = struct{}{}
	for _, id := range ids {
		h.orgOf[id] = org
		f := h.feeds[id]
		if f == nil {
			f = h.startFeedLocked(id, org)
		}
		f.greet(s)
	}
	return nil
}

// unsubscribe detaches s, from its campaign's feed or its organization.
func (h *eventHub) unsubscribe(s *stream) {
	h.mu.Lock()
	var f *feed
	if s.campaignID != 0 {
		f = h.feeds[s.campaignID]
	} else if subs := h.orgs[s.org]; subs != nil {
		delete(subs, s)
		if len(subs) == 0 {
			delete(h.orgs, s.org)
		}
	}
	h.mu.Unlock()
	if f != nil {
		f.detach(s)
	}
}

// orgStreams returns organization org's streams.
func (h *eventHub) orgStreams(org int64) []*stream {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*stream, 0, len(h.orgs[org]))
	for s := range h.orgs[org] {
		out = append(out, s)
	}
	return out
}

// learnOrg records campaign id's organization; it reports whether the
// organization has streams.
func (h *eventHub) learnOrg(id, org int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.orgOf[id] = org
	return len(h.orgs[org]) > 0
}

// retire removes feed f when nobody watches its campaign any more; it
// reports whether it did.
func (h *eventHub) retire(f *feed) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.feeds[f.id] != f {
		return true
	}
	if !h.closed && (f.subscribers() > 0 || (f.org != 0 && len(h.orgs[f.org]) > 0)) {
		return false
	}
	delete(h.feeds, f.id)
	return true
}

// callsLastMinute returns how many of campaign id's calls ended in the
// minute before now.
func (h *eventHub) callsLastMinute(id int64, now time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.rates[id]; r != nil {
		return r.count(now)
	}
	return 0
}

func (h *eventHub) sweepRatesLocked(now time.Time) {
	for id, r := range h.rates {
		if r.count(now) == 0 {
			delete(h.rates, id)
		}
	}
}

// close ends every stream and feed (the server shuts down).
func (h *eventHub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.closing)
	}
}

// minuteRing counts events per second over the last minute.
type minuteRing struct {
	sec [60]int64 // unix second of each bucket
	n   [60]int
}

func (r *minuteRing) add(t time.Time) {
	s := t.Unix()
	i := int(s % 60)
	if r.sec[i] != s {
		r.sec[i], r.n[i] = s, 0
	}
	r.n[i]++
}

// count returns the events of the 60 seconds up to now.
func (r *minuteRing) count(now time.Time) int {
	s, total := now.Unix(), 0
	for i := range r.sec {
		if d := s - r.sec[i]; d >= 0 && d < 60 {
			total += r.n[i]
		}
	}
	return total
}
