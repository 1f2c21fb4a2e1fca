package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/spf13/pflag"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web"
)

// addServiceFlags registers the flags startService reads: the listener,
// the object store, calls, workflow and resource limits, metrics and logs.
// serve has them all; the demo gives them to a flag set of its own.
func addServiceFlags(f *pflag.FlagSet) {
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
	addAuditFlags(f)
	addMetricsFlags(f)
	addLogFlags(f) // --log-level, --log-format (logging.go)
}

// service is a running Outdial service: the store, the object store, the
// dialer, the web server on its listener and the metrics listener. Build it
// with startService; wait runs it until its context ends.
type service struct {
	log    *slog.Logger
	db     *store.DB
	engine *dialer.Engine
	srv    *http.Server
	// addr is the address the web server listens on (the port chosen when
	// --addr asked for port 0); public the service's public URL.
	addr   string
	public *url.URL
	errc   chan error // the web server's Serve result
	// cancel ends the background work started with the service (the
	// uploads sweep); closers release the rest, last first.
	cancel  context.CancelFunc
	closers []func()
}

// serviceOptions are what startService needs beyond its flags.
type serviceOptions struct {
	// DataDir is the data directory and KeyPath the secret key in it
	// (dataPaths); Location is the database: DATA/outdial.db, or a
	// PostgreSQL URL (serve --database-url).
	DataDir, Location, KeyPath string
	// Node names this node among those sharing the database ("":
	// hostname:port of the listener); LeaseTTL is its campaign leases' TTL
	// (0: dialer.DefaultLeaseTTL). API.md 16.
	Node     string
	LeaseTTL time.Duration
	// Carriers are the providers' options (API base URLs), for both the
	// dialer and the API's application provisioning.
	Carriers carrier.Options
	// Log is the one logger every component shares.
	Log *slog.Logger
	// TLS, when set, makes the web server serve https (cmd/tls.go): --addr
	// defaults to :443, --public-url to the https address, and the
	// plain-HTTP listener of --http-addr redirects to it.
	TLS *tlsSetup
	// LoopbackPublic makes the default public URL (no --public-url) name
	// 127.0.0.1 when the listener's host is unspecified (0.0.0.0, ::):
	// the demo's browser and simulator are on this host.
	LoopbackPublic bool
}

// startService opens the database, builds the object store, the dialer and
// the web server from f (the flags of addServiceFlags) and o, and starts
// them: once it returns, the listener accepts requests and the dialer runs
// (it resumes campaigns a previous process left running). Everything
// started is stopped again when startService fails.
func startService(ctx context.Context, f *pflag.FlagSet, o serviceOptions) (_ *service, err error) {
	log, dataDir := o.Log, o.DataDir
	ctx, cancel := context.WithCancel(ctx)
	s := &service{log: log, cancel: cancel, errc: make(chan error, 1)}
	defer func() {
		if err != nil {
			s.release()
		}
	}()
	created := keyMissing(o.KeyPath)
	db, sealer, err := openStore(ctx, o.Location, o.KeyPath, true)
	if err != nil {
		return nil, err
	}
	s.db = db
	s.closers = append(s.closers, func() { db.Close() })
	if err := checkSecret(ctx, db, o.KeyPath, created); err != nil {
		return nil, err
	}
	db.SetLogger(log)
	if err := applyWorkflowLimits(f, db); err != nil {
		return nil, err
	}
	// Deletions and imports a previous process left unfinished (hidden
	// campaigns) are purged in the background; only serve imports, so
	// nothing hidden is in progress now.
	if err := db.ResumePurges(ctx); err != nil {
		return nil, err
	}

	addr, _ := f.GetString("addr")
	if o.TLS != nil && !f.Changed("addr") {
		addr = defaultTLSAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s.closers = append(s.closers, func() { ln.Close() })
	s.addr = ln.Addr().String()
	publicAddr := s.addr
	if host, port, _ := net.SplitHostPort(s.addr); o.LoopbackPublic && net.ParseIP(host).IsUnspecified() {
		publicAddr = net.JoinHostPort("127.0.0.1", port)
	}
	if s.public, err = publicURL(f, publicAddr, o.TLS); err != nil {
		return nil, err
	}
	node := nodeName(o.Node, s.addr)
	maxUpload, _ := f.GetInt64("max-upload-bytes")
	objs, err := buildObjects(ctx, f, dataDir, s.public, sealer, maxUpload, log)
	if err != nil {
		return nil, err
	}
	met := newMetrics(f)
	s.engine = buildDialer(f, db, sealer, s.public, log, met, o.Carriers, node, o.LeaseTTL)
	stopMetrics, err := serveMetrics(f, met, db, s.engine, node, log)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, stopMetrics)
	cfg := web.Config{DB: db, Log: log, Version: Version, MaxUploadBytes: maxUpload, Dialer: s.engine,
		PublicURL: s.public.String(), Carriers: o.Carriers, TLS: o.TLS != nil, Node: node}
	objs.webConfig(&cfg)
	lim, err := setupLimits(ctx, f, dataDir, &cfg, db, objs.store, log)
	if err != nil {
		return nil, err
	}
	if err := startAuditRetention(ctx, f, db, log); err != nil {
		return nil, err
	}
	handler := web.New(cfg)
	s.srv = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Shutdown waits for the requests under way; an event stream lasts as
	// long as its client, so it is ended first.
	s.srv.RegisterOnShutdown(handler.CloseStreams)
	ln = lim.listener(s.srv, ln) // connection cap, timeouts and shedding (cmd/limits.go)
	log.Info("outdial listening", slog.String("addr", ln.Addr().String()), slog.Bool("tls", o.TLS != nil),
		slog.String("public_url", s.public.String()), slog.String("version", Version), slog.String("node", node),
		slog.String("database", db.Engine()), slog.String("database_location", describeDatabase(o.Location)))

	if o.TLS != nil {
		closeHTTP, err := o.TLS.serveHTTP(s.public)
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, closeHTTP)
		s.srv.TLSConfig = o.TLS.config()
		go func() { s.errc <- s.srv.ServeTLS(ln, "", "") }()
		go o.TLS.obtainCertificates(ctx)
	} else {
		go func() { s.errc <- s.srv.Serve(ln) }()
	}
	// The engine starts once webhooks can be received; it reconciles what a
	// previous process left in flight, then resumes running campaigns.
	if err := s.engine.Start(ctx); err != nil {
		log.Error("dialer start", slog.String("error", err.Error()))
	}
	return s, nil
}

// wait runs the service until ctx ends (SIGINT/SIGTERM in serve), then
// shuts it down. It returns nil after such a shutdown, or the web server's
// error when that stopped serving by itself.
func (s *service) wait(ctx context.Context) error {
	select {
	case err := <-s.errc:
		s.engine.Stop()
		s.release()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.shutdown()
	return nil
}

// shutdown stops the service: no new calls from then on, HTTP requests
// under way finish (for up to 9 s), the metrics listener stops and the
// database is closed.
func (s *service) shutdown() {
	s.log.Info("shutting down")
	// No new calls from here; requests under way finish.
	s.engine.Stop()
	shutCtx, cancel := context.WithTimeout(context.Background(), 9*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(shutCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.log.Warn("shutdown", slog.String("error", err.Error()))
	}
	s.release()
}

// release ends the service's background work and closes what it opened,
// in the reverse order of opening.
func (s *service) release() {
	s.cancel()
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}
