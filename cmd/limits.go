package cmd

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/pflag"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/diskspace"
	"github.com/outdial/outdial/store/objstore"
	"github.com/outdial/outdial/web"
)

// Defaults of serve's resource limits (docs/api.md 8, "Limits").
const (
	// defaultMaxConnsCap caps the default of --max-connections. A held
	// connection costs about 50 KB of memory (buffers, goroutine stack, GC
	// headroom), so a full flood at the cap stays under 2 GB; below the cap,
	// the more connections the service can hold, the fewer a flood leaves
	// waiting in the kernel's accept queue ahead of a real client
	// (docs/performance.md, connection flood).
	defaultMaxConnsCap = 32768
	// fdHeadroom is the number of file descriptors the default of
	// --max-connections leaves for everything but client connections: the
	// database and its WAL, objects being written or read, the dialer's
	// connections to providers (up to a campaign's max_concurrency), ARI
	// websockets, logs.
	fdHeadroom = 1024
)

// addLimitFlags registers serve's connection, body, disk and upload limits.
func addLimitFlags(f *pflag.FlagSet) {
	f.Int("max-connections", 0, fmt.Sprintf("concurrent client connections (0: the open-files limit minus %d, at most %d); idle and stalled ones are shed from 3/4 of it", fdHeadroom, defaultMaxConnsCap))
	f.Duration("read-header-timeout", 10*time.Second, "time a client has to send a request's headers")
	f.Duration("idle-timeout", 60*time.Second, "time a keep-alive connection may wait for its next request")
	f.Duration("body-timeout", 30*time.Second, "time an API or webhook request body has to arrive in full (presigned uploads have no such deadline)")
	f.Int64("body-min-rate", 64<<10, "minimum rate of every request body, presigned uploads included, in bytes per second averaged over --body-rate-window (0: none)")
	f.Duration("body-rate-window", 10*time.Second, "window of --body-min-rate: a body is cut when a window passes without min-rate x window bytes")
	f.Int64("disk-reserve-bytes", -1, "free space kept on the data directory's filesystem for the dialer's own writes; below it uploads and campaign creates answer 507 (-1: the smaller of 1 GiB and 5% of the filesystem; 0: none)")
	f.Int64("upload-quota-bytes", 2<<30, "bytes of contacts uploads an organization may keep, stored plus presigned; a presign beyond answers 413 (0: no quota)")
	f.Int("upload-quota-files", 100, "contacts uploads an organization may keep, stored plus presigned; a presign beyond answers 413 (0: no quota)")
	f.Duration("upload-retention", 24*time.Hour, "age at which an upload no campaign was created from is deleted (0: kept)")
	f.Duration("upload-sweep-interval", 5*time.Minute, "how often uploads are swept: deleted once a campaign was created from them, or when older than --upload-retention (0: never)")
	f.Int("max-streams-per-key", web.DefaultStreamsPerKey, "open event streams one API key (or its console sessions) may hold; one more answers 429")
	f.Int("max-streams-per-org", web.DefaultStreamsPerOrg, "open event streams one organization may hold; one more answers 429")
	f.Int("max-streams", 0, fmt.Sprintf("open event streams in all, so that streams never take the connections ordinary requests need (0: a quarter of --max-connections, at most %d); one more answers 503", web.DefaultMaxStreams))
	f.Int("max-campaign-rows", web.DefaultMaxCampaignRows, "contacts one campaign may have; a CSV with more is refused with 422 csv_too_many_rows and nothing is stored")
}

// servedLimits are the limits of one serve run.
type servedLimits struct {
	conns web.ConnLimits
	log   *slog.Logger
}

// setupLimits raises the open-files limit to its hard limit, reads the
// limit flags, fills cfg.Limits and starts the upload sweep, which runs
// until ctx ends. Its listener method caps and tracks the connections.
func setupLimits(ctx context.Context, f *pflag.FlagSet, dataDir string, cfg *web.Config, db *store.DB, objs *objstore.Store, log *slog.Logger) (*servedLimits, error) {
	openFiles, hard, err := raiseOpenFiles()
	if err != nil {
		log.Warn("open-files limit not raised", slog.String("error", err.Error()))
	}
	maxConns, _ := f.GetInt("max-connections")
	headerTimeout, _ := f.GetDuration("read-header-timeout")
	idleTimeout, _ := f.GetDuration("idle-timeout")
	bodyTimeout, _ := f.GetDuration("body-timeout")
	minRate, _ := f.GetInt64("body-min-rate")
	window, _ := f.GetDuration("body-rate-window")
	quotaBytes, _ := f.GetInt64("upload-quota-bytes")
	quotaFiles, _ := f.GetInt("upload-quota-files")
	retention, _ := f.GetDuration("upload-retention")
	sweepEvery, _ := f.GetDuration("upload-sweep-interval")
	maxRows, _ := f.GetInt("max-campaign-rows")
	perKey, _ := f.GetInt("max-streams-per-key")
	perOrg, _ := f.GetInt("max-streams-per-org")
	maxStreams, _ := f.GetInt("max-streams")
	switch {
	case maxConns < 0:
		return nil, fmt.Errorf("--max-connections must be 0 (automatic) or more, not %d", maxConns)
	case headerTimeout <= 0 || idleTimeout <= 0:
		return nil, fmt.Errorf("--read-header-timeout and --idle-timeout must be positive")
	case bodyTimeout < 0 || minRate < 0 || window < 0 || quotaBytes < 0 || quotaFiles < 0 || retention < 0 || sweepEvery < 0:
		return nil, fmt.Errorf("body, quota and retention limits must not be negative (0 turns one off)")
	case maxRows < 1:
		return nil, fmt.Errorf("--max-campaign-rows must be at least 1, not %d", maxRows)
	case perKey < 1 || perOrg < 1 || maxStreams < 0:
		return nil, fmt.Errorf("--max-streams-per-key and --max-streams-per-org must be at least 1, --max-streams 0 (automatic) or more")
	}
	if maxConns == 0 {
		maxConns = defaultMaxConns(openFiles)
	} else if openFiles > 0 && uint64(maxConns)+64 > openFiles {
		log.Warn("--max-connections leaves fewer than 64 file descriptors for the database, uploads and providers",
			slog.Int("max_connections", maxConns), slog.Uint64("open_files", openFiles))
	}
	if maxStreams == 0 {
		maxStreams = defaultMaxStreams(maxConns)
	}
	reserve, err := diskReserve(f, dataDir)
	if err != nil {
		return nil, err
	}
	cfg.Limits = web.Limits{
		BodyTimeout: bodyTimeout, BodyMinRate: minRate, BodyRateWindow: window,
		DiskReserve:      reserve,
		UploadQuotaBytes: quotaBytes, UploadQuotaFiles: quotaFiles, UploadRetention: retention,
		MaxCampaignRows: maxRows,
		Streams:         web.StreamLimits{PerKey: perKey, PerOrg: perOrg, Total: maxStreams},
	}
	lim := &servedLimits{log: log, conns: web.ConnLimits{MaxConns: maxConns, ReadHeaderTimeout: headerTimeout, IdleTimeout: idleTimeout, Log: log}}
	log.Info("limits",
		slog.Uint64("open_files", openFiles), slog.Uint64("open_files_hard", hard), slog.Int("max_connections", maxConns),
		slog.Int("max_streams", maxStreams), slog.Int("max_streams_per_key", perKey), slog.Int("max_streams_per_org", perOrg),
		slog.Duration("body_timeout", bodyTimeout), slog.Int64("body_min_rate", minRate), slog.Duration("body_rate_window", window),
		slog.String("disk_reserve", diskspace.Format(reserve.Bytes())),
		slog.Int64("upload_quota_bytes", quotaBytes), slog.Int("upload_quota_files", quotaFiles),
		slog.Duration("upload_retention", retention), slog.Duration("upload_sweep_interval", sweepEvery))
	if sweepEvery > 0 {
		go sweepUploads(ctx, db, objs, sweepEvery, retention, log)
	}
	return lim, nil
}

// listener configures srv's connection handling and returns ln capped at
// --max-connections, for srv.Serve.
func (l *servedLimits) listener(srv *http.Server, ln net.Listener) net.Listener {
	ln, _ = l.conns.Apply(srv, ln)
	return ln
}

// defaultMaxConns is --max-connections' default for a soft open-files
// limit of openFiles: openFiles − fdHeadroom, at most defaultMaxConnsCap;
// with fewer than 2 × fdHeadroom files (or an unknown limit), half of them
// (at least 16).
func defaultMaxConns(openFiles uint64) int {
	switch {
	case openFiles == 0:
		return 512
	case openFiles < 2*fdHeadroom:
		return max(int(openFiles/2), 16)
	}
	return int(min(openFiles-fdHeadroom, defaultMaxConnsCap))
}

// defaultMaxStreams is --max-streams' default for a connection cap of
// maxConns: a quarter of it (at least 1), at most web.DefaultMaxStreams. A
// stream holds its connection and is never shed, so the other three
// quarters stay for ordinary requests whatever streams are held.
func defaultMaxStreams(maxConns int) int {
	return max(min(maxConns/4, web.DefaultMaxStreams), 1)
}

// diskReserve returns the reserve of --disk-reserve-bytes on dataDir's
// filesystem (-1: diskspace.DefaultReserve of its size; 0: none).
func diskReserve(f *pflag.FlagSet, dataDir string) (*diskspace.Reserve, error) {
	n, _ := f.GetInt64("disk-reserve-bytes")
	usage := diskspace.Statfs(dataDir)
	switch {
	case n == 0:
		return nil, nil
	case n > 0:
		return diskspace.NewReserve(usage, uint64(n)), nil
	case n != -1:
		return nil, fmt.Errorf("--disk-reserve-bytes must be -1 (automatic), 0 (none) or a number of bytes, not %d", n)
	}
	u, err := usage()
	if err != nil {
		// No statfs here: run without a reserve rather than not at all.
		return nil, nil //nolint:nilerr // documented: no reserve where free space cannot be measured
	}
	return diskspace.NewReserve(usage, diskspace.DefaultReserve(u.Total)), nil
}

// objectSpaceCheck is the bundled object store's SpaceCheck for the
// --disk-reserve-bytes of dataDir: a refusal while an upload would cut into
// the reserve; a failure to measure is logged and lets the upload through.
func objectSpaceCheck(f *pflag.FlagSet, dataDir string, log *slog.Logger) func(int64) error {
	reserve, err := diskReserve(f, dataDir)
	if err != nil || reserve == nil {
		return nil // a bad flag is reported by setupLimits
	}
	return func(need int64) error {
		err := reserve.Check(need)
		if err != nil && !diskspace.IsLowSpace(err) {
			log.Warn("disk reserve not checked", slog.String("error", err.Error()))
			return nil
		}
		return err
	}
}

// sweepUploads runs store.SweepUploads on the organizations' uploads every
// interval (and once at start) until ctx ends.
func sweepUploads(ctx context.Context, db *store.DB, objs *objstore.Store, every, retention time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		res, err := db.SweepUploads(ctx, objs, web.UploadsPrefix, retention)
		if err != nil && ctx.Err() == nil {
			log.Warn("uploads sweep", slog.String("error", err.Error()))
		}
		if res.Used+res.Expired > 0 {
			log.Info("uploads deleted", slog.Int("used", res.Used), slog.Int("expired", res.Expired),
				slog.Int64("bytes", res.Bytes), slog.Int("kept", res.Kept))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
