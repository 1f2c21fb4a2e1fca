package web

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/wire"
)

const (
	// snapshotEvery is the shortest time between two flushes of a feed:
	// at most 2 snapshots per second per campaign (API.md 10).
	snapshotEvery = 500 * time.Millisecond
	// callsPerSecond caps a stream's call events (API.md 10).
	callsPerSecond = 50
	// feedRefresh re-reads a watched campaign that reported nothing, for
	// what changed without the engine (a settings edit by another
	// process): once per ping interval, not per stream.
	feedRefresh = 15 * time.Second
	// diagnosisEvery bounds how often blocked_by is worked out again while
	// the campaign's state stays the same: the diagnosis groups the queued
	// attempts (about 1 ms for a million-contact campaign, more while many
	// retries wait), so the interval is also at least diagnosisCost times
	// the last one's duration, which bounds a watched campaign's diagnoses
	// to 5% of a core.
	diagnosisEvery = 5 * time.Second
	diagnosisCost  = 20
	// logsPerRead is the page of new log entries read per flush.
	logsPerRead = 500
)

// feed reads what changed in one watched campaign, once for all its
// streams, and hands it to them (eventhub.go explains the design).
type feed struct {
	h   *eventHub
	id  int64
	org int64 // 0 until read

	ready chan struct{} // closed once lastLog is known
	wake  chan struct{}

	mu       sync.Mutex
	subs     map[*stream]struct{}
	greeted  map[*stream]struct{} // streams that still need a first snapshot
	latest   *snapshotJSON        // the last snapshot handed out (a new stream gets it at once)
	calls    []callEventJSON      // ended since the last flush, newest last
	skipped  int                  // calls dropped from calls beyond the rate
	windowAt time.Time            // start of the current second of the call rate
	inWindow int                  // calls sent in it

	// Owned by run.
	lastLog  int64
	last     *snapshotJSON
	diagAt   time.Time
	diagNext time.Duration // the interval before the next diagnosis
	diagOf   string        // the state the diagnosis was made in
	blocked  []string
	lastSent time.Time
	seq      uint64 // snapshots made
}

func newFeed(h *eventHub, id, org int64) *feed {
	return &feed{h: h, id: id, org: org, ready: make(chan struct{}), wake: make(chan struct{}, 1),
		subs: map[*stream]struct{}{}, greeted: map[*stream]struct{}{}}
}

// note records a change (a call that ended, or nil) and wakes the feed.
func (f *feed) note(c *dialer.EndedCall) {
	if c != nil {
		ev := callEventJSON{ID: c.AttemptID, ContactRow: c.ContactRow, Attempt: c.Attempt, State: store.AttemptDone,
			Outcome: c.Outcome, StartedAt: optTS(c.StartedAt), EndedAt: ts(c.EndedAt), DurationSeconds: c.DurationSeconds,
			AnswerToFirstAudioMs: c.AnswerToFirstAudioMs, Abandoned: c.Abandoned}
		f.mu.Lock()
		f.calls = append(f.calls, ev)
		if len(f.calls) > callsPerSecond {
			// Only the newest can be sent before the next flush.
			n := len(f.calls) - callsPerSecond
			f.skipped += n
			f.calls = append(f.calls[:0], f.calls[n:]...)
		}
		f.mu.Unlock()
	}
	f.poke()
}

func (f *feed) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// attach adds campaign stream s; it gets the feed's latest snapshot at once
// (API.md 10: one on connect), or the first one when the feed has none yet.
func (f *feed) attach(s *stream) {
	f.mu.Lock()
	f.subs[s] = struct{}{}
	f.mu.Unlock()
	f.welcome(s, true)
}

// greet makes an organization-wide stream get this campaign's snapshot:
// the latest at once, or the first one.
func (f *feed) greet(s *stream) { f.welcome(s, false) }

func (f *feed) welcome(s *stream, endIfFinal bool) {
	f.mu.Lock()
	snap := f.latest
	if snap == nil {
		f.greeted[s] = struct{}{}
	}
	f.mu.Unlock()
	if snap != nil {
		s.pushSnapshot(snap, endIfFinal && finalState(snap.State))
		return
	}
	f.poke()
}

func (f *feed) detach(s *stream) {
	f.mu.Lock()
	delete(f.subs, s)
	delete(f.greeted, s)
	f.mu.Unlock()
	f.poke()
}

func (f *feed) subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

// run flushes the feed when woken, at most every snapshotEvery, and every
// feedRefresh when nothing woke it, until nobody watches the campaign.
func (f *feed) run() {
	ctx := context.Background()
	defer f.markReady()
	last, err := f.h.db.LastLogID(ctx, f.id)
	if err != nil {
		f.h.log.Error("events: last log entry", slog.Int64("campaign_id", f.id), slog.String("error", err.Error()))
	}
	f.lastLog = last
	f.markReady()
	refresh := time.NewTimer(feedRefresh)
	defer refresh.Stop()
	for {
		select {
		case <-f.wake:
		case <-refresh.C:
		case <-f.h.closing:
			return
		}
		if wait := snapshotEvery - f.h.now().Sub(f.lastSent); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-f.h.closing:
				t.Stop()
				return
			}
		}
		f.lastSent = f.h.now()
		if !f.flush(ctx) && f.h.retire(f) {
			return
		}
		refresh.Reset(feedRefresh)
	}
}

func (f *feed) markReady() {
	select {
	case <-f.ready:
	default:
		close(f.ready)
	}
}

// flush reads what changed and hands it to the streams; it reports false
// when the feed has nothing more to do (nobody watches, or the campaign is
// gone).
func (f *feed) flush(ctx context.Context) bool {
	now := f.h.now()
	snap, err := f.snapshot(ctx, now)
	if store.ErrorCode(err) == store.ENOTFOUND {
		// Deleted: its streams end.
		f.each(func(s *stream) { s.end() })
		return false
	}
	if err != nil {
		f.h.log.Error("events: campaign snapshot", slog.Int64("campaign_id", f.id), slog.String("error", err.Error()))
		return true
	}
	if f.org == 0 {
		f.org = snap.org
	}
	orgWatched := f.h.learnOrg(f.id, snap.org)
	var logs []frame
	if f.subscribers() > 0 {
		logs = f.newLogs(ctx)
	}
	calls, skipped, greeted := f.take(now)
	changed := f.last == nil || !f.last.sameAs(snap)
	f.seq++
	snap.seq = f.seq
	f.last = snap
	f.mu.Lock()
	f.latest = snap
	f.mu.Unlock()
	final := finalState(snap.State)
	f.each(func(s *stream) {
		_, greet := greeted[s]
		s.push(logs, calls, skipped)
		if changed || greet || skipped > 0 {
			s.pushSnapshot(snap, final)
		}
	})
	if orgWatched {
		for _, s := range f.h.orgStreams(snap.org) {
			if _, greet := greeted[s]; changed || greet {
				s.pushSnapshot(snap, false)
			}
		}
	}
	return f.subscribers() > 0 && !final || orgWatched
}

// newLogs reads and encodes the log entries written since the last read.
func (f *feed) newLogs(ctx context.Context) []frame {
	entries, err := f.h.db.LogsAfter(ctx, f.id, f.lastLog, logsPerRead)
	if err != nil {
		f.h.log.Error("events: new log entries", slog.Int64("campaign_id", f.id), slog.String("error", err.Error()))
		return nil
	}
	if len(entries) == logsPerRead {
		f.poke() // more to read at the next flush
	}
	out := make([]frame, 0, len(entries))
	for _, e := range entries {
		f.lastLog = e.ID
		fr, err := logFrame(e)
		if err != nil {
			f.h.log.Error("events: encode log entry", slog.Int64("campaign_id", f.id), slog.String("error", err.Error()))
			continue
		}
		out = append(out, fr)
	}
	return out
}

// take returns the calls to send now (at most callsPerSecond per second,
// the newest), how many were skipped, and the streams to greet.
func (f *feed) take(now time.Time) ([]frame, int, map[*stream]struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now.Sub(f.windowAt) >= time.Second {
		f.windowAt, f.inWindow = now, 0
	}
	calls := f.calls
	if room := callsPerSecond - f.inWindow; len(calls) > room {
		f.skipped += len(calls) - room
		calls = calls[len(calls)-room:]
	}
	f.inWindow += len(calls)
	out := make([]frame, 0, len(calls))
	for _, c := range calls {
		fr, err := encodeFrame("call", 0, c)
		if err != nil {
			f.h.log.Error("events: encode call", slog.Int64("campaign_id", f.id), slog.String("error", err.Error()))
			continue
		}
		out = append(out, fr)
	}
	f.calls = f.calls[:0]
	skipped := f.skipped
	f.skipped = 0
	greeted := f.greeted
	f.greeted = map[*stream]struct{}{}
	return out, skipped, greeted
}

// each calls fn for each campaign stream.
func (f *feed) each(fn func(*stream)) {
	f.mu.Lock()
	subs := make([]*stream, 0, len(f.subs))
	for s := range f.subs {
		subs = append(subs, s)
	}
	f.mu.Unlock()
	for _, s := range subs {
		fn(s)
	}
}

// snapshot builds the campaign's snapshot at now.
func (f *feed) snapshot(ctx context.Context, now time.Time) (*snapshotJSON, error) {
	c, err := f.h.db.CampaignCounters(ctx, f.id)
	if err != nil {
		return nil, err
	}
	inFlight, known := f.h.dialer.InFlight(f.id)
	if !known {
		n, err := f.h.db.CountActiveAttempts(ctx, f.id)
		if err != nil {
			return nil, err
		}
		inFlight = n
	}
	if c.State != f.diagOf || now.Sub(f.diagAt) >= f.diagNext {
		t0 := time.Now()
		d, err := f.h.dialer.Diagnose(ctx, c.OrganizationID, f.id)
		if err != nil {
			return nil, err
		}
		f.diagNext = max(diagnosisEvery, diagnosisCost*time.Since(t0))
		f.blocked = f.blocked[:0]
		for _, r := range d.Reasons {
			f.blocked = append(f.blocked, r.Code)
		}
		f.diagAt, f.diagOf = now, c.State
	}
	var next *string
	if c.State == store.StateRunning {
		next = optTS(c.NextDialAt)
	}
	rates, err := f.h.dialer.AbandonedRates(ctx, c.OrganizationID, f.id)
	if err != nil {
		return nil, err
	}
	return &snapshotJSON{ID: c.ID, State: c.State, TotalRows: c.TotalRows, ProcessedRows: c.ProcessedRows,
		FailedRows: c.FailedRows, ExecutedCount: c.ExecutedCount, InFlight: inFlight, MaxConcurrency: c.MaxConcurrency,
		Outcomes: c.Outcomes, CallsLastMinute: f.h.callsLastMinute(f.id, now), NextDialAt: next,
		BlockedBy: append([]string{}, f.blocked...), AbandonedRate24h: wire.AbandonedRates(rates), org: c.OrganizationID}, nil
}

// finalState reports whether a campaign in state st dials no more.
func finalState(st string) bool {
	return st == store.StateCompleted || st == store.StateCancelled || st == store.StateFailed
}
