package cmd

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
	_ "time/tzdata" // IANA zones for hosts without /usr/share/zoneinfo

	"github.com/spf13/cobra"
)

func lookupEnv(name string) string { return os.Getenv(name) }

func newServe() *cobra.Command {
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the API, the bundled object store and the dialer (alone, or as one node of several on PostgreSQL)",
		Args:  cobra.NoArgs,
		RunE:  runServe,
	}
	f := c.Flags()
	addServiceFlags(f) // service.go
	addTLSFlags(f)     // tls.go
	addClusterFlags(f) // cluster.go: --database-url, --node-name, --lease-ttl
	f.Lookup("addr").Usage = "listen address (with TLS on, unless set: " + defaultTLSAddr + ")"
	f.Lookup("public-url").Usage = "base URL providers and browsers use to reach the service (default http://<addr>; with TLS on https:// and the first --acme-domain, else <addr>)"
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
	log, err := newLogger(f, c.ErrOrStderr())
	if err != nil {
		return err
	}
	// Checked before anything is opened or created (API.md 16).
	cluster, err := readClusterFlags(f)
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
	// ends the server too, like SIGINT/SIGTERM. SIGHUP reads --tls-cert and
	// --tls-key again; it never stops the server.
	ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	dataDir, dbPath, keyPath, err := dataPaths(c)
	if err != nil {
		return err
	}
	tlsSet, err := newTLSSetup(f, dataDir, log)
	if err != nil {
		return err
	}
	location := dbPath
	if cluster.DatabaseURL != "" {
		location = cluster.DatabaseURL
	}
	svc, err := startService(ctx, f, serviceOptions{
		DataDir: dataDir, Location: location, KeyPath: keyPath, Carriers: carrierOptions(), Log: log, TLS: tlsSet,
		Node: cluster.Node, LeaseTTL: cluster.LeaseTTL,
	})
	if err != nil {
		return err
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				_ = tlsSet.reload(log)
			}
		}
	}()
	// systemd (Type=notify): ready now; the watchdog fed while the database
	// answers; stopping once a signal ends ctx (notify.go).
	sd := newNotifier(log)
	_ = sd.send("READY=1\nSTATUS=serving on " + svc.addr + " as " + svc.public.String())
	go sd.watchdog(ctx, watchdogInterval(), svc.db.Ping)
	go func() {
		<-ctx.Done()
		_ = sd.send("STOPPING=1")
	}()
	return svc.wait(ctx)
}
