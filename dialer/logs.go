package dialer

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// aggregator keeps, per campaign and event, the log entry of the current
// minute, so repeated events become one entry with a count.
type aggregator struct {
	mu      sync.Mutex
	entries map[string]aggEntry
}

type aggEntry struct {
	id    int64
	since time.Time
	count int
}

func (e *Engine) aggregateLog(ctx context.Context, campaignID int64, level, event, msg string, details map[string]any) {
	key := fmt.Sprintf("%d/%s", campaignID, event)
	now := e.now()
	e.agg.mu.Lock()
	defer e.agg.mu.Unlock()
	if e.agg.entries == nil {
		e.agg.entries = map[string]aggEntry{}
	}
	e.pruneAggregatedLocked(now)
	ent, ok := e.agg.entries[key]
	if ok && now.Sub(ent.since) < time.Minute {
		ent.count++
		details["count"] = ent.count
		if err := e.db.UpdateLog(ctx, ent.id, fmt.Sprintf("%s (%d times in the last minute)", msg, ent.count), details); err != nil {
			e.log.Error("dialer: update log", slog.String("error", err.Error()))
		}
		e.touched(campaignID)
		e.agg.entries[key] = ent
		return
	}
	details["count"] = 1
	id, err := e.db.AddLog(ctx, campaignID, level, event, msg, details)
	if err != nil {
		e.log.Error("dialer: add log", slog.String("error", err.Error()))
		return
	}
	e.agg.entries[key] = aggEntry{id: id, since: now, count: 1}
	e.touched(campaignID)
}

func (e *Engine) addLog(ctx context.Context, campaignID int64, level, event, msg string, details map[string]any) {
	if _, err := e.db.AddLog(ctx, campaignID, level, event, msg, details); err != nil {
		e.log.Error("dialer: add log", slog.String("event", event), slog.String("error", err.Error()))
	}
	e.touched(campaignID)
}
