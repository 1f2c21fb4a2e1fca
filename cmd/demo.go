package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// signInLinkTTL is how long the demo's sign-in link can be used (once).
const signInLinkTTL = time.Hour

func newDemo() *cobra.Command {
	c := &cobra.Command{
		Use:   "demo",
		Short: "Try Outdial without a carrier: the service, a simulated Twilio account and a sample campaign running",
		Long: `demo starts the service together with the bundled Twilio simulator on
loopback (no real call is placed), then, over HTTP as any client would: creates
organization "demo" and an API key, a Twilio configuration with the simulator's
credentials and a caller id, a sample workflow, uploads 200 sample contacts
through a presigned URL, and starts a campaign whose calls end answered, on
voicemail, busy, unanswered or failed (retries included) in about a minute.
A simulated voice agent reports its first audio on the answered calls, most
within a second and a half, some late, a few never, so the console shows
abandoned calls. It prints the console's address and a sign-in link that works once.

The data lives in a temporary directory removed on exit, unless --data names
one. demo reads no OUTDIAL_* variable but OUTDIAL_SECRET_KEY (which seals
credentials as in serve): it never picks up a serve's settings or data
directory. Ctrl-C stops it.`,
		Args: cobra.NoArgs,
		// No OUTDIAL_* binding (root's PersistentPreRunE is not run).
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE:              runDemo,
	}
	f := c.Flags()
	f.String("addr", "127.0.0.1:8080", "listen address of the service and its console (port 0: any free port)")
	// Shadows root's --data, whose default is serve's.
	f.String("data", "", "keep the demo's data in this directory (default: a temporary directory, removed on exit)")
	return c
}

func runDemo(c *cobra.Command, _ []string) error {
	addr, _ := c.Flags().GetString("addr")
	dataFlag, _ := c.Flags().GetString("data")
	out := c.OutOrStdout()
	ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	dir, removeDir, err := demoDataDir(dataFlag)
	if err != nil {
		return err
	}
	defer removeDir()
	// The service's own flags, at serve's defaults: the bundled object
	// store, no metrics listener (it would collide with a running serve's),
	// warnings and errors only on stderr.
	f := pflag.NewFlagSet("demo", pflag.ContinueOnError)
	addServiceFlags(f)
	for name, v := range map[string]string{"addr": addr, "metrics-addr": "", "log-level": "warn", "log-format": "text",
		"agent-url": demoAgentURL} {
		if err := f.Set(name, v); err != nil {
			return fmt.Errorf("--%s: %w", name, err)
		}
	}
	log, err := newLogger(f, c.ErrOrStderr())
	if err != nil {
		return err
	}
	rows, err := demoRows(demoContacts)
	if err != nil {
		return err
	}
	// The simulated agent learns each call's plan when the call is
	// created and acts on its answer.
	agent := newDemoAgent(log)
	defer agent.stop()
	script := demoScript(rows)
	sim, err := startDemoCarrier(func(c twiliosim.CallInfo) twiliosim.Script {
		agent.expect(c.SID, demoAgentPlanOf(demoRowOf(rows, c.To), c.Attempt))
		return script(c)
	}, agent.simClient(), log)
	if err != nil {
		return err
	}
	defer sim.stop()
	// Twilio is the simulator; the other providers keep their public
	// API URLs (no OUTDIAL_*_API_URL is read).
	carriers := carrier.Options{BaseURLs: map[string]string{carrier.Twilio: sim.url}}
	svc, err := startService(ctx, f, serviceOptions{
		DataDir: dir, Location: filepath.Join(dir, dbFileName), KeyPath: filepath.Join(dir, "secret.key"),
		Carriers: carriers, Log: log, LoopbackPublic: true,
	})
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s is already in use (is outdial serve running?): pass --addr with another port, or --addr 127.0.0.1:0 for any free one", addr)
	}
	if err != nil {
		return err
	}
	if err := demoStart(ctx, out, svc, sim, dir, dataFlag == ""); err != nil {
		svc.shutdown()
		if ctx.Err() != nil {
			return nil // Ctrl-C during the set-up
		}
		return err
	}
	err = svc.wait(ctx)
	fmt.Fprintln(out, "Stopped.")
	return err
}

// demoDataDir returns the demo's data directory: dir when set (created if
// needed, kept), else a new temporary directory, which remove deletes.
func demoDataDir(dir string) (_ string, remove func(), err error) {
	if dir != "" {
		if err := checkDataDir(dir); err != nil {
			return "", nil, err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", nil, fmt.Errorf("create data directory: %w", err)
		}
		return dir, func() {}, nil
	}
	dir, err = os.MkdirTemp("", "outdial-demo-")
	if err != nil {
		return "", nil, fmt.Errorf("create a temporary data directory: %w", err)
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// demoStart creates organization demo's key, sets the organization up and
// starts its campaign through the API, creates a sign-in link for the key
// and prints what runs and where.
func demoStart(ctx context.Context, out io.Writer, svc *service, sim *demoCarrier, dir string, temporary bool) error {
	k, key, err := svc.db.CreateAPIKey(ctx, demoOrg, "demo", store.RoleAdmin)
	if err != nil {
		return err
	}
	base := svc.public.String()
	client := &demoClient{base: base, key: key.Reveal(), http: &http.Client{Timeout: 30 * time.Second}}
	defer client.http.CloseIdleConnections()
	camp, err := client.setUp(ctx, sim.sim)
	if err != nil {
		return fmt.Errorf("demo set-up: %w", err)
	}
	token, err := svc.db.CreateSignInLink(ctx, store.Principal{APIKeyID: k.ID, OrganizationID: k.OrganizationID}, signInLinkTTL)
	if err != nil {
		return fmt.Errorf("sign-in link: %w", err)
	}
	kept := "removed on exit"
	if !temporary {
		kept = "kept"
	}
	fmt.Fprintf(out, "Outdial demo (%s): the service and a simulated Twilio account on this machine; no real call is placed.\n", Version)
	fmt.Fprintf(out, "  service           %s (data in %s, %s)\n", base, dir, kept)
	fmt.Fprintf(out, "  Twilio simulator  %s (account %s)\n", sim.url, sim.sim.AccountSID())
	fmt.Fprintf(out, "Calling hours are off for organization %q so its campaign dials now (new organizations call 08:00-21:00 callee-local).\n", demoOrg)
	fmt.Fprintf(out, "Campaign %d %q is running: %d contacts, about a minute.\n\n", camp.ID, demoCampaignName, camp.TotalRows)
	fmt.Fprintf(out, "Console:  %s/console/\n", base)
	fmt.Fprintf(out, "Sign in:  %s/console/sign-in/link?token=%s  (works once, within an hour)\n", base, url.QueryEscape(token))
	fmt.Fprintf(out, "API key:  %s  (organization %q: for curl, or to sign in again)\n\n", key.Reveal(), demoOrg)
	fmt.Fprintln(out, "Ctrl-C to stop.")
	return nil
}
