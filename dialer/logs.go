package dialer

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// aggregator keeps, per campaign and event, the log entry of the current
// minute, so repeated events become one entry with a count. Its lock guards
// the map only; each entry has its own, held across the entry's write, so
// a slow write holds back the same event of the same campaign and nothing
// else.
type aggregator struct {
	mu      sync.Mutex
	entries map[string]*aggEntry
}

type aggEntry struct {
	mu    sync.Mutex // guards the fields below; held across the entry's log write
	dead  bool       // dropped from the map by prune: look the key up again
	id    int64      // the log entry (0: none written yet)
	since time.Time
	count int
}

// lock returns the entry of key, locked.
func (a *aggregator) lock(key string, now time.Time) *aggEntry {
	for {
		a.mu.Lock()
		if a.entries == nil {
			a.entries = map[string]*aggEntry{}
		}
		a.pruneLocked(now)
		ent := a.entries[key]
		if ent == nil {
			ent = &aggEntry{}
			a.entries[key] = ent
		}
		a.mu.Unlock()
		ent.mu.Lock()
		if !ent.dead {
			return ent
		}
		ent.mu.Unlock()
	}
}

func (e *Engine) aggregateLog(ctx context.Context, campaignID int64, level, event, msg string, details map[string]any) {
	key := fmt.Sprintf("%d/%s", campaignID, event)
	now := e.now()
	ent := e.agg.lock(key, now)
	defer ent.mu.Unlock()
	if ent.id != 0 && now.Sub(ent.since) < time.Minute {
		ent.count++
		details["count"] = ent.count
		if err := e.db.UpdateLog(ctx, ent.id, fmt.Sprintf("%s (%d times in the last minute)", msg, ent.count), details); err != nil {
			e.log.Error("dialer: update log", slog.String("error", err.Error()))
		}
		e.touched(campaignID)
		return
	}
	details["count"] = 1
	id, err := e.db.AddLog(ctx, campaignID, level, event, msg, details)
	if err != nil {
		e.log.Error("dialer: add log", slog.String("error", err.Error()))
		return
	}
	ent.id, ent.since, ent.count = id, now, 1
	e.touched(campaignID)
}

func (e *Engine) addLog(ctx context.Context, campaignID int64, level, event, msg string, details map[string]any) {
	if _, err := e.db.AddLog(ctx, campaignID, level, event, msg, details); err != nil {
		e.log.Error("dialer: add log", slog.String("event", event), slog.String("error", err.Error()))
	}
	e.touched(campaignID)
}
