package web

import (
	"encoding/json"
	"strconv"
	"sync"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/wire"
)

// snapshotJSON is the data of an "event: campaign" (API.md 10).
type snapshotJSON struct {
	ID              int64          `json:"id"`
	State           string         `json:"state"`
	TotalRows       int64          `json:"total_rows"`
	ProcessedRows   int64          `json:"processed_rows"`
	FailedRows      int64          `json:"failed_rows"`
	ExecutedCount   int64          `json:"executed_count"`
	InFlight        int            `json:"in_flight"`
	MaxConcurrency  int            `json:"max_concurrency"`
	Outcomes        store.Outcomes `json:"outcomes"`
	CallsLastMinute int            `json:"calls_last_minute"`
	NextDialAt      *string        `json:"next_dial_at"`
	BlockedBy       []string       `json:"blocked_by"`
	// AbandonedRate24h is abandoned_rate_24h (API.md 19).
	AbandonedRate24h wire.AbandonedRates `json:"abandoned_rate_24h"`
	// CallsSkipped is the number of call events not sent on this stream
	// since its previous snapshot (the rate limit, or a client too slow).
	CallsSkipped int `json:"calls_skipped"`

	org int64
	seq uint64 // the feed's count of snapshots: a stream never takes an older one after a newer
}

// sameAs reports whether o says the same as s (calls_skipped aside).
func (s *snapshotJSON) sameAs(o *snapshotJSON) bool {
	if s.ID != o.ID || s.State != o.State || s.TotalRows != o.TotalRows || s.ProcessedRows != o.ProcessedRows ||
		s.FailedRows != o.FailedRows || s.ExecutedCount != o.ExecutedCount || s.InFlight != o.InFlight ||
		s.MaxConcurrency != o.MaxConcurrency || s.Outcomes != o.Outcomes || s.CallsLastMinute != o.CallsLastMinute ||
		(s.NextDialAt == nil) != (o.NextDialAt == nil) || s.NextDialAt != nil && *s.NextDialAt != *o.NextDialAt ||
		len(s.BlockedBy) != len(o.BlockedBy) || !sameRate(s.AbandonedRate24h.Campaign, o.AbandonedRate24h.Campaign) ||
		!sameRate(s.AbandonedRate24h.Organization, o.AbandonedRate24h.Organization) {
		return false
	}
	for i := range s.BlockedBy {
		if s.BlockedBy[i] != o.BlockedBy[i] {
			return false
		}
	}
	return true
}

// sameRate reports whether two rates are both null or equal.
func sameRate(a, b *float64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// frame is one event encoded once by its feed for every stream (id: the
// log entry's, for a Last-Event-ID replay's overlap; 0 for a call).
type frame struct {
	id int64
	b  []byte
}

// encodeFrame encodes an event named name with data v (and id, when not
// 0): "id: ...\nevent: ...\ndata: ...\n\n".
func encodeFrame(name string, id int64, v any) (frame, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return frame{}, err
	}
	b := make([]byte, 0, len(data)+len(name)+32)
	if id != 0 {
		b = append(b, "id: "...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, '\n')
	}
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	return frame{id: id, b: b}, nil
}

// logFrame encodes log entry e as a log event.
func logFrame(e store.LogEntry) (frame, error) {
	return encodeFrame("log", e.ID, logEventJSON{ID: e.ID,
		LogEntry: wire.LogEntry{TS: ts(e.TS), Level: e.Level, Event: e.Event, Message: e.Message, Details: e.Details}})
}

// callEventJSON is the data of an "event: call" (API.md 10).
type callEventJSON struct {
	ID         int64  `json:"id"`
	ContactRow int64  `json:"contact_row"`
	Attempt    int64  `json:"attempt"`
	State      string `json:"state"`
	Outcome    string `json:"outcome"`
	// StartedAt is when the call was claimed for dialling, as the calls
	// list's started_at; null when not known.
	StartedAt       *string `json:"started_at"`
	EndedAt         string  `json:"ended_at"`
	DurationSeconds int     `json:"duration_seconds"`
	// AnswerToFirstAudioMs and Abandoned are the abandonment verdict on the
	// call (API.md 19), null when no person answered.
	AnswerToFirstAudioMs *int64 `json:"answer_to_first_audio_ms"`
	Abandoned            *bool  `json:"abandoned"`
}

// logEventJSON is the data of an "event: log": a log entry (API.md 4.6)
// with its id, which is also the event's id.
type logEventJSON struct {
	ID int64 `json:"id"`
	wire.LogEntry
}

// streamBuffer bounds what a stream holds for a client that does not read:
// beyond it, call events are skipped (and counted) and a log entry that
// does not fit ends the stream, so the client reconnects and is replayed
// from the database with Last-Event-ID.
const streamBuffer = 1024

// stream is one client's event stream: what its feed(s) handed it and the
// request goroutine has not written yet. Feeds never block on it.
type stream struct {
	campaignID int64 // 0: organization-wide
	org        int64
	wake       chan struct{}

	mu       sync.Mutex
	logs     []frame
	calls    []frame
	skipped  int
	snaps    map[int64]*snapshotJSON // the newest snapshot per campaign not written yet
	order    []int64                 // snaps' campaigns in arrival order
	seqs     map[int64]uint64        // the newest snapshot handed over per campaign
	overflow bool                    // a log entry did not fit: end, the client replays
	final    bool                    // the campaign reached a final state: end after its snapshot
	ended    bool                    // the campaign is gone, or the credential: end now
	reason   string                  // why it ended, when not the campaign (a comment line to the client)
}

func newStream(campaignID, org int64) *stream {
	return &stream{campaignID: campaignID, org: org, wake: make(chan struct{}, 1), snaps: map[int64]*snapshotJSON{},
		seqs: map[int64]uint64{}}
}

func (s *stream) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// push queues log and call events; skipped calls were not sent by the
// feed (its rate limit).
func (s *stream) push(logs, calls []frame, skipped int) {
	if len(logs) == 0 && len(calls) == 0 && skipped == 0 {
		return
	}
	s.mu.Lock()
	s.skipped += skipped
	if len(s.logs)+len(logs) > streamBuffer {
		s.overflow = true
	} else {
		s.logs = append(s.logs, logs...)
	}
	s.calls = append(s.calls, calls...)
	if over := len(s.calls) - streamBuffer; over > 0 {
		// The newest are kept (API.md 10).
		s.skipped += over
		s.calls = append(s.calls[:0], s.calls[over:]...)
	}
	s.mu.Unlock()
	s.poke()
}

// pushSnapshot replaces the campaign's pending snapshot with snap, unless
// a newer one was handed over already (a new stream's welcome racing a
// flush); final ends a campaign stream after it.
func (s *stream) pushSnapshot(snap *snapshotJSON, final bool) {
	s.mu.Lock()
	if seq, ok := s.seqs[snap.ID]; ok && snap.seq <= seq {
		s.mu.Unlock()
		return
	}
	s.seqs[snap.ID] = snap.seq
	if _, ok := s.snaps[snap.ID]; !ok {
		s.order = append(s.order, snap.ID)
	}
	s.snaps[snap.ID] = snap
	s.final = s.final || final
	s.mu.Unlock()
	s.poke()
}

// end ends the stream at once (its campaign is gone).
func (s *stream) end() { s.endWith("") }

// endWith ends the stream at once, telling the client reason in a comment
// line (its credential no longer authenticates).
func (s *stream) endWith(reason string) {
	s.mu.Lock()
	s.ended = true
	if s.reason == "" {
		s.reason = reason
	}
	s.mu.Unlock()
	s.poke()
}

// pending is what a stream has to write now.
type pending struct {
	logs     []frame
	calls    []frame
	snaps    []snapshotJSON
	overflow bool
	final    bool
	ended    bool
	reason   string
}

// take empties the stream's buffers; the snapshots carry the calls skipped
// since the previous one.
func (s *stream) take() pending {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := pending{logs: s.logs, calls: s.calls, overflow: s.overflow, final: s.final, ended: s.ended, reason: s.reason}
	s.logs, s.calls = nil, nil
	for _, id := range s.order {
		snap := *s.snaps[id]
		snap.CallsSkipped, s.skipped = s.skipped, 0
		p.snaps = append(p.snaps, snap)
	}
	clear(s.snaps)
	s.order = s.order[:0]
	return p
}
