package cmd

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/outdial/outdial/store"
)

// defaultAuditRetention is --audit-retention's default: 400 days, a year
// and a month of answers to "who changed this".
const defaultAuditRetention = 400 * 24 * time.Hour

// auditSweepInterval is how often serve deletes the audit entries older
// than --audit-retention.
const auditSweepInterval = time.Hour

// addAuditFlags registers --audit-retention.
func addAuditFlags(f *pflag.FlagSet) {
	f.Duration("audit-retention", defaultAuditRetention, "age at which an audit trail entry is deleted (0: kept forever)")
}

// startAuditRetention reads --audit-retention and, unless it is 0, deletes
// the older entries now and every auditSweepInterval until ctx ends. A
// negative retention is refused.
func startAuditRetention(ctx context.Context, f *pflag.FlagSet, db *store.DB, log *slog.Logger) error {
	retention, _ := f.GetDuration("audit-retention")
	if retention < 0 {
		return fmt.Errorf("--audit-retention must not be negative (0 keeps the trail forever), not %s", retention)
	}
	log.Info("audit trail", slog.Duration("audit_retention", retention))
	if retention == 0 {
		return nil
	}
	go sweepAudit(ctx, db, auditSweepInterval, retention, log)
	return nil
}

// sweepAudit runs store.PurgeAudit every interval (and once at start)
// until ctx ends. On several nodes each sweeps; a sweep finding nothing
// costs one index probe.
func sweepAudit(ctx context.Context, db *store.DB, every, retention time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := db.PurgeAudit(ctx, db.Now().Add(-retention))
		if err != nil && ctx.Err() == nil {
			log.Warn("audit retention", slog.String("error", err.Error()))
		}
		if n > 0 {
			log.Info("audit entries deleted", slog.Int64("deleted", n), slog.Duration("audit_retention", retention))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
