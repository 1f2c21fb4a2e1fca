package web

import (
	"strconv"
	"testing"
	"time"
)

// A stream whose client never reads: what feeds hand it is bounded (calls
// beyond the buffer skipped and counted, a log entry beyond it marks the
// stream to end so the client replays), and handing never blocks.
func TestStreamBoundedWithoutReader(t *testing.T) {
	s := newStream(1, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 10 * streamBuffer {
			s.push([]frame{{id: int64(i)}}, []frame{{b: []byte(strconv.Itoa(i))}}, 1)
			s.pushSnapshot(&snapshotJSON{ID: 1, ProcessedRows: int64(i), seq: uint64(i + 1)}, false)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("handing events to a stream nobody reads blocked")
	}
	p := s.take()
	if len(p.calls) != streamBuffer || len(p.logs) != streamBuffer || !p.overflow {
		t.Fatalf("buffered %d calls, %d logs, overflow %v; want %d, %d, true", len(p.calls), len(p.logs), p.overflow, streamBuffer, streamBuffer)
	}
	if got, want := string(p.calls[len(p.calls)-1].b), strconv.Itoa(10*streamBuffer-1); got != want {
		t.Errorf("newest call kept = %s, want %s", got, want)
	}
	// Skipped: the feed's 1 per push, plus the calls that did not fit.
	if len(p.snaps) != 1 || p.snaps[0].CallsSkipped != 10*streamBuffer+9*streamBuffer || p.snaps[0].ProcessedRows != 10*streamBuffer-1 {
		t.Errorf("snapshots %+v; want the newest alone, with %d calls skipped", p.snaps, 19*streamBuffer)
	}
}

// The calls-per-minute ring counts the last 60 seconds only.
func TestMinuteRing(t *testing.T) {
	var r minuteRing
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for i := range 120 {
		r.add(t0.Add(time.Duration(i) * time.Second))
	}
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{{119 * time.Second, 60}, {150 * time.Second, 29}, {179 * time.Second, 0}, {10 * time.Minute, 0}} {
		if got := r.count(t0.Add(tc.at)); got != tc.want {
			t.Errorf("count at +%v = %d, want %d", tc.at, got, tc.want)
		}
	}
}

// A frame is the event as a client reads it.
func TestEncodeFrame(t *testing.T) {
	started := "2026-11-26T09:59:52.250Z"
	for _, tc := range []struct {
		name string
		id   int64
		v    any
		want string
	}{
		{"call", 0, callEventJSON{ID: 3, ContactRow: 2, Attempt: 1, State: "done", Outcome: "busy", StartedAt: &started, EndedAt: "2026-11-26T10:00:00.000Z"},
			"event: call\ndata: {\"id\":3,\"contact_row\":2,\"attempt\":1,\"state\":\"done\",\"outcome\":\"busy\",\"started_at\":\"2026-11-26T09:59:52.250Z\",\"ended_at\":\"2026-11-26T10:00:00.000Z\",\"duration_seconds\":0,\"answer_to_first_audio_ms\":null,\"abandoned\":null}\n\n"},
		{"call", 0, callEventJSON{ID: 4, ContactRow: 3, Attempt: 1, State: "done", Outcome: "canceled", EndedAt: "2026-11-26T10:00:00.000Z"},
			"event: call\ndata: {\"id\":4,\"contact_row\":3,\"attempt\":1,\"state\":\"done\",\"outcome\":\"canceled\",\"started_at\":null,\"ended_at\":\"2026-11-26T10:00:00.000Z\",\"duration_seconds\":0,\"answer_to_first_audio_ms\":null,\"abandoned\":null}\n\n"},
		{"log", 42, map[string]string{"message": "a\nb"}, "id: 42\nevent: log\ndata: {\"message\":\"a\\nb\"}\n\n"},
	} {
		fr, err := encodeFrame(tc.name, tc.id, tc.v)
		if err != nil || string(fr.b) != tc.want || fr.id != tc.id {
			t.Errorf("%s: %q %d %v, want %q", tc.name, fr.b, fr.id, err, tc.want)
		}
	}
}

// A snapshot older than one handed over already (a new stream's welcome
// with the feed's latest, racing the flush of a newer one) is dropped.
func TestStreamKeepsTheNewerSnapshot(t *testing.T) {
	s := newStream(1, 1)
	s.pushSnapshot(&snapshotJSON{ID: 1, ProcessedRows: 5, seq: 2}, false)
	s.pushSnapshot(&snapshotJSON{ID: 1, ProcessedRows: 3, seq: 1}, true)
	p := s.take()
	if len(p.snaps) != 1 || p.snaps[0].ProcessedRows != 5 || p.final {
		t.Fatalf("pending %+v (final %v), want the newer snapshot alone, not final", p.snaps, p.final)
	}
	s.pushSnapshot(&snapshotJSON{ID: 1, ProcessedRows: 4, seq: 2}, false)
	if p := s.take(); len(p.snaps) != 0 {
		t.Errorf("a snapshot already written came again: %+v", p.snaps)
	}
}
