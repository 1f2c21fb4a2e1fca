package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/pflag"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/metrics"
	"github.com/outdial/outdial/store"
)

// defaultMetricsAddr is --metrics-addr's default: loopback only, since
// /debug/pprof/ is on the same listener.
const defaultMetricsAddr = "127.0.0.1:9464"

func addMetricsFlags(f *pflag.FlagSet) {
	f.String("metrics-addr", defaultMetricsAddr,
		"listen address of Prometheus /metrics and /debug/pprof/ (a separate listener; empty disables)")
}

// newMetrics returns the metrics to record into, nil when --metrics-addr is
// empty (the engine then records nothing).
func newMetrics(f *pflag.FlagSet) *metrics.Metrics {
	if addr, _ := f.GetString("metrics-addr"); addr == "" {
		return nil
	}
	return metrics.New()
}

// nodeInfo is the gauge outdial_node_info{node="..."}, always 1: the node a
// scrape came from, among the nodes sharing a database (API.md 16).
func nodeInfo(node string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "outdial_node_info",
		Help:        "Always 1; its label names this node (serve --node-name).",
		ConstLabels: prometheus.Labels{"node": node}})
	g.Set(1)
	return g
}

// serveMetrics wires met to the database and the engine, adds the node's
// info gauge (nodeInfo), and serves it with
// pprof on --metrics-addr until the returned function is called. Nothing is
// served when met is nil. When the default address is taken (another
// process on the host) serve goes on without the listener and says so; an
// address given by flag or OUTDIAL_METRICS_ADDR that cannot be listened on
// is an error.
func serveMetrics(f *pflag.FlagSet, met *metrics.Metrics, db *store.DB, engine *dialer.Engine, node string, log *slog.Logger) (func(), error) {
	if met == nil {
		return func() {}, nil
	}
	if err := met.Registry().Register(nodeInfo(node)); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	db.ObserveBatches(met.ObserveBatch)
	met.WatchInFlight(engine.EachInFlight)
	met.WatchCampaigns(db.CampaignCountsByState)
	addr, _ := f.GetString("metrics-addr")
	ln, err := net.Listen("tcp", addr)
	if err != nil && !f.Changed("metrics-addr") {
		log.Warn("metrics listener not started", slog.String("addr", addr), slog.String("error", err.Error()))
		return func() {}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	srv := &http.Server{
		Handler:           metricsMux(met),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("metrics listening", slog.String("addr", ln.Addr().String()))
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener", slog.String("error", err.Error()))
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// metricsMux serves /metrics from met's registry and the pprof handlers:
// registered here, on this listener only (never on http.DefaultServeMux's
// users or the API).
func metricsMux(met *metrics.Metrics) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(met.Registry(), promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", httppprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)
	return mux
}
