package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
	"time"
	_ "time/tzdata" // IANA zones for hosts without /usr/share/zoneinfo

	"github.com/spf13/cobra"

	"github.com/outdial/outdial/web"
)

func lookupEnv(name string) string { return os.Getenv(name) }

func newServe() *cobra.Command {
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the API, the bundled object store and the dialer",
		Args:  cobra.NoArgs,
		RunE:  runServe,
	}
	f := c.Flags()
	f.String("addr", "127.0.0.1:8080", "listen address")
	f.String("public-url", "", "base URL providers and browsers use to reach the service (default http://<addr>)")
	f.String("s3-endpoint", "", "host:port of a remote S3-compatible service (default: the bundled store)")
	f.String("s3-bucket", "outdial", "bucket of the remote S3 service")
	f.String("s3-access-key", "", "access key of the remote S3 service")
	f.String("s3-secret-key", "", "secret key of the remote S3 service")
	f.String("s3-region", "us-east-1", "region of the remote S3 service")
	f.Bool("s3-insecure", false, "use http instead of https for the remote S3 service")
	f.Int64("max-upload-bytes", 256<<20, "largest contacts file accepted, in bytes")
	f.Int64("max-call-seconds", 3600, "longest call before an attempt is reconciled")
	f.String("agent-url", "", "websocket URL of the voice-agent runtime answered calls connect to")
	addWorkflowLimitFlags(f)
	addLimitFlags(f)
	addMetricsFlags(f)
	addLogFlags(f) // --log-level, --log-format (logging.go)
	// Hidden: a CPU profile of the whole run, written when serve returns
	// (bench/dialbench uses it).
	f.String("cpuprofile", "", "write a CPU profile to this file until the server stops")
	_ = f.MarkHidden("cpuprofile")
	return c
}

// startCPUProfile starts profiling into path ("" = none) and returns the
// function that stops it.
func startCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	file, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(file); err != nil {
		file.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		file.Close()
	}, nil
}

func runServe(c *cobra.Command, _ []string) error {
	f := c.Flags()
	addr, _ := f.GetString("addr")
	log, err := newLogger(f, c.ErrOrStderr())
	if err != nil {
		return err
	}
	// The live heap is small (tens of MB even at 500 calls in flight), so
	// trading some of it for fewer collections is cheap: GC was ~4% of a
	// busy dialer's CPU at the default 100.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	profile, _ := f.GetString("cpuprofile")
	stopProfile, err := startCPUProfile(profile)
	if err != nil {
		return err
	}
	defer stopProfile()

	// The command's context (Background from Execute; tests pass their own)
	// ends the server too, like SIGINT/SIGTERM.
	ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	dataDir, dbPath, keyPath, err := dataPaths(c)
	if err != nil {
		return err
	}
	db, sealer, err := openStore(ctx, dbPath, keyPath)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetLogger(log)
	if err := applyWorkflowLimits(f, db); err != nil {
		return err
	}
	// Deletions and imports a previous process left unfinished (hidden
	// campaigns) are purged in the background; only serve imports, so
	// nothing hidden is in progress now.
	if err := db.ResumePurges(ctx); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer ln.Close()
	public, err := publicURL(f, ln.Addr().String())
	if err != nil {
		return err
	}
	maxUpload, _ := f.GetInt64("max-upload-bytes")
	objs, err := buildObjects(ctx, f, dataDir, public, sealer, maxUpload, log)
	if err != nil {
		return err
	}
	met := newMetrics(f)
	engine := buildDialer(f, db, sealer, public, log, met)
	stopMetrics, err := serveMetrics(f, met, db, engine, log)
	if err != nil {
		return err
	}
	defer stopMetrics()
	cfg := web.Config{DB: db, Log: log, Version: Version, MaxUploadBytes: maxUpload, Dialer: engine, PublicURL: public.String(),
		Carriers: carrierOptions()}
	objs.webConfig(&cfg)
	lim, err := setupLimits(ctx, f, dataDir, &cfg, db, objs.store, log)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           web.New(cfg),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	ln = lim.listener(srv, ln) // connection cap, timeouts and shedding (cmd/limits.go)
	log.Info("outdial listening", slog.String("addr", ln.Addr().String()), slog.String("version", Version))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	// The engine starts once webhooks can be received; it reconciles what a
	// previous process left in flight, then resumes running campaigns.
	if err := engine.Start(ctx); err != nil {
		log.Error("dialer start", slog.String("error", err.Error()))
	}
	select {
	case err := <-errc:
		engine.Stop()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	// No new calls from here; requests under way finish.
	engine.Stop()
	shutCtx, cancel := context.WithTimeout(context.Background(), 9*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("shutdown", slog.String("error", err.Error()))
	}
	return nil
}
