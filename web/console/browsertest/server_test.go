package browsertest_test

// The real server the browser talks to: the whole stack cmd/serve.go wires,
// on a loopback listener, with the Twilio simulator as Twilio's API.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/dialer/phone"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/objstore"
	"github.com/outdial/outdial/store/storetest"
	"github.com/outdial/outdial/web"
)

// Timings of the simulated calls: short, so a campaign of a few contacts
// ends within a second or two.
const (
	simRing = 150 * time.Millisecond
	simTalk = 300 * time.Millisecond
)

// stack is one Outdial server, built as cmd/serve.go builds it: a database
// opened with store.Open (storetest.NewLocation: a SQLite file in a fresh
// directory, or a new PostgreSQL database with OUTDIAL_TEST_DATABASE_URL
// set), the bundled object
// store on the same listener (its endpoint is the listener's host:port,
// credentials derived from the server secret), the dialer engine with the
// Twilio carrier's base URL pointed at a twiliosim.Server, and web.New
// serving them all over a real TCP listener on 127.0.0.1. Tests reach it
// over HTTP only, like a browser or a client: url is its base URL.
type stack struct {
	dir    string
	url    string // http://127.0.0.1:<port>, no trailing slash
	db     *store.DB
	dropDB func() error // removes the database once db is closed
	sim    *twiliosim.Server
	engine *dialer.Engine
	srv    *http.Server
	logs   *lockedBuffer // the server's log lines (text format)
	cancel context.CancelFunc
	served chan error // Serve's result

	mu      sync.Mutex
	scripts map[string]twiliosim.Script // by To number; see script
}

// startStack starts a stack in a new temporary directory. close stops it and
// removes the directory.
func startStack() (_ *stack, err error) {
	dir, err := os.MkdirTemp("", "outdial-browsertest-")
	if err != nil {
		return nil, err
	}
	s := &stack{dir: dir, logs: &lockedBuffer{}, scripts: map[string]twiliosim.Script{}, served: make(chan error, 1)}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	log := slog.New(phone.NewMaskingHandler(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelInfo})))

	secret := make([]byte, store.KeySize)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	sealer, err := store.NewSealer(secret)
	if err != nil {
		return nil, fmt.Errorf("sealer: %w", err)
	}
	location, dropDB, err := storetest.NewLocation(dir)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	s.dropDB = dropDB
	if s.db, err = store.Open(ctx, location, sealer); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s.db.SetLogger(log)
	if err := s.db.ResumePurges(ctx); err != nil {
		return nil, fmt.Errorf("resume purges: %w", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s.url = "http://" + ln.Addr().String()
	const maxUpload = 16 << 20
	objs, objHandler, err := objstore.NewBundled(objstore.BundledConfig{
		Dir: filepath.Join(dir, "objects"), Endpoint: ln.Addr().String(), Insecure: true,
		AccessKey:     "outdial-" + hex.EncodeToString(sealer.Derive("s3-access-key")[:8]),
		SecretKey:     base64.RawURLEncoding.EncodeToString(sealer.Derive("s3-secret-key")),
		Region:        "us-east-1",
		MaxObjectSize: maxUpload,
		Logger:        log,
	})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("bundled object store: %w", err)
	}

	s.sim = twiliosim.Start(twiliosim.Config{Script: s.script})
	carriers := carrier.Options{BaseURLs: map[string]string{carrier.Twilio: s.sim.URL()}}
	engineCarriers := carriers
	engineCarriers.Logger = log
	s.engine = dialer.New(dialer.Config{DB: s.db, Log: log, PublicURL: s.url,
		TokenKey: sealer.Derive("webhook-token"), MaxCallSeconds: 3600, Carriers: engineCarriers})
	s.srv = &http.Server{
		Handler: web.New(web.Config{DB: s.db, Log: log, Version: "browsertest", MaxUploadBytes: maxUpload,
			Dialer: s.engine, PublicURL: s.url, Carriers: carriers,
			Uploads: objs, Objects: objHandler, ObjectsPrefix: objstore.PathPrefix}),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() { s.served <- s.srv.Serve(ln) }()
	// As serve does: the engine starts once webhooks can be received.
	if err := s.engine.Start(ctx); err != nil {
		return nil, fmt.Errorf("dialer start: %w", err)
	}
	return s, nil
}

// script is the simulator's script function: the Script a test set for the
// call's To number with setScript, else a person who answers after simRing
// and talks for simTalk.
func (s *stack) script(c twiliosim.CallInfo) twiliosim.Script {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sc, ok := s.scripts[c.To]; ok {
		return sc
	}
	return twiliosim.Script{Outcome: twiliosim.Human, RingDelay: simRing, TalkDuration: simTalk}
}

// setScript makes every later call to the E.164 number to play sc. Tests
// use numbers of their own (see org.numbers), so scripts do not collide.
func (s *stack) setScript(to string, sc twiliosim.Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[to] = sc
}

// close stops the engine, the HTTP server, the simulator and the database,
// in that order, and removes the data directory. It returns the first error.
func (s *stack) close() error {
	var errs []error
	if s.cancel != nil {
		s.cancel()
	}
	if s.engine != nil {
		s.engine.Stop()
	}
	if s.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := s.srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shutdown: %w", err))
		}
		cancel()
		if err := <-s.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("serve: %w", err))
		}
	}
	if s.sim != nil {
		s.sim.Close()
	}
	if s.db != nil {
		if err := s.db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close store: %w", err))
		}
	}
	if s.dropDB != nil {
		if err := s.dropDB(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(s.dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// lockedBuffer is a bytes.Buffer safe for the server's concurrent logging
// and the browser's output.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// tail returns the whole lines among the last n bytes written (all of
// them when fewer).
func (b *lockedBuffer) tail(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.buf.Bytes()
	if len(out) > n {
		out = out[len(out)-n:]
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			out = out[i+1:]
		}
	}
	return string(out)
}
