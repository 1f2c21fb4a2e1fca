package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/outdial/outdial/store"
)

func newCopyData() *cobra.Command {
	c := &cobra.Command{
		Use:   "copy-data --from DATA --database-url URL",
		Short: "Copy a single host's data directory into an empty PostgreSQL database",
		Long: `Copy everything in DATA/outdial.db (organizations, API keys, telephony
configurations and their numbers, workflows, campaigns with their contacts,
calls and logs, suppression lists, compliance policies, console sessions)
into the PostgreSQL database at --database-url (env OUTDIAL_DATABASE_URL),
keeping every id, so that nodes started with --database-url carry on where
the single host stopped.

The database must hold no table of outdial's: a non-empty one is refused,
unchanged. The copy is one transaction: interrupted or failed, it leaves the
database as it was. The source is only read (one consistent snapshot), and
must be at this outdial's schema version (outdial migrate --data DATA first).
Stop the single host's serve before copying: what it writes after the
snapshot is not copied.

OUTDIAL_SECRET_KEY must hold the cluster's server secret, the one every node
will have. The data directory's sealed credentials are checked with it before
anything is written; those that open only with DATA/secret.key are re-sealed
with it. To keep the data directory's key, set OUTDIAL_SECRET_KEY to the
contents of DATA/secret.key.

Uploads not yet used by a campaign (DATA/objects) are not copied.`,
		Args: cobra.NoArgs,
		RunE: runCopyData,
	}
	c.Flags().String("from", "", "data directory of the single host to copy (holding outdial.db)")
	c.Flags().String("database-url", "", "PostgreSQL URL of the empty database to copy into (postgres://USER:PASS@HOST:PORT/DB?sslmode=...)")
	return c
}

func runCopyData(c *cobra.Command, _ []string) error {
	// Interrupted, the copy's transaction is rolled back.
	ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	from, _ := c.Flags().GetString("from")
	url, _ := c.Flags().GetString("database-url")
	if from == "" {
		return errors.New("copy-data: --from DATA is required: the data directory to copy")
	}
	if url == "" {
		return errors.New("copy-data: --database-url (or OUTDIAL_DATABASE_URL) is required: the PostgreSQL database to copy into")
	}
	if !store.IsDatabaseURL(url) {
		return errors.New("copy-data: --database-url must be a PostgreSQL URL (postgres://USER:PASS@HOST:PORT/DB?sslmode=...)")
	}
	if err := checkDataDir(from); err != nil {
		return err
	}
	dbPath := filepath.Join(from, dbFileName)
	if _, err := os.Stat(dbPath); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("copy-data: no database in %s (%s does not exist)", from, dbPath)
	}
	opts, keyNote, err := copyKeys(from)
	if err != nil {
		return err
	}
	out := c.OutOrStdout()
	opts.Progress = func(p store.TableCopy) { printTableCopy(out, p) }
	fmt.Fprintf(out, "copying %s into %s\n", dbPath, redactURL(url))
	report, err := store.CopyData(ctx, dbPath, url, opts)
	var old *store.SourceSchemaError
	if errors.As(err, &old) {
		return fmt.Errorf("copy data: %s is at schema version %d, this outdial's is %d: run outdial migrate --data %s first, then copy again",
			dbPath, old.Version, old.Supported, from)
	}
	if err != nil {
		return err // "copy data: …"
	}
	fmt.Fprintf(out, "copied %d rows of %d tables in %.1f s; %s is at schema version %d\n",
		report.Rows, len(report.Tables), report.Elapsed.Seconds(), redactURL(url), report.SchemaVersion)
	switch {
	case report.Credentials == 0:
		fmt.Fprintln(out, "no telephony configuration holds credentials")
	case report.Resealed == 0:
		fmt.Fprintf(out, "the credentials of %d telephony configurations open with OUTDIAL_SECRET_KEY: copied as they were\n", report.Credentials)
	default:
		fmt.Fprintf(out, "the credentials of %d telephony configurations were re-sealed from %s with OUTDIAL_SECRET_KEY (%d opened with it already)\n",
			report.Resealed, keyNote, report.Credentials-report.Resealed)
		if report.UnfinishedAttempts > 0 {
			fmt.Fprintf(out, "%d calls were in progress: their webhooks carry tokens of the data directory's key, which the nodes refuse; a node settles each by asking its provider when it takes the campaign over\n",
				report.UnfinishedAttempts)
		}
	}
	fmt.Fprintln(out, "start every node with --database-url and this OUTDIAL_SECRET_KEY")
	return nil
}

// copyKeys returns the keys of the copy: the cluster's (OUTDIAL_SECRET_KEY,
// required) and, when DATA/secret.key exists and differs from it, the data
// directory's, to re-seal from; and how to name the latter in messages.
func copyKeys(from string) (store.CopyOptions, string, error) {
	env := lookupEnv("OUTDIAL_SECRET_KEY")
	keyPath := filepath.Join(from, "secret.key")
	if env == "" {
		return store.CopyOptions{}, "", fmt.Errorf("copy-data: OUTDIAL_SECRET_KEY is not set: set it to the cluster's server secret, which every node will have (to keep the data directory's, use the contents of %s)", keyPath)
	}
	// With env set, LoadOrCreateKey decodes it and never touches the file.
	cluster, err := store.LoadOrCreateKey(env, keyPath)
	if err != nil {
		return store.CopyOptions{}, "", err
	}
	sealer, err := store.NewSealer(cluster)
	if err != nil {
		return store.CopyOptions{}, "", err
	}
	opts := store.CopyOptions{Sealer: sealer}
	if _, err := os.Stat(keyPath); errors.Is(err, fs.ErrNotExist) {
		return opts, keyPath, nil
	} else if err != nil {
		return store.CopyOptions{}, "", fmt.Errorf("copy-data: %w", err)
	}
	// The file exists: read, never created.
	own, err := store.LoadOrCreateKey("", keyPath)
	if err != nil {
		return store.CopyOptions{}, "", err
	}
	if !bytes.Equal(own, cluster) {
		if opts.SourceSealer, err = store.NewSealer(own); err != nil {
			return store.CopyOptions{}, "", err
		}
	}
	return opts, keyPath, nil
}

// printTableCopy prints a progress line of the copy.
func printTableCopy(out io.Writer, p store.TableCopy) {
	if p.Done {
		fmt.Fprintf(out, "copied %-26s %10d rows in %6.1f s (keys and indexes %.1f s)\n", p.Table, p.Rows, p.Elapsed.Seconds(), p.Keys.Seconds())
		return
	}
	fmt.Fprintf(out, "  %s: %d rows so far, %.1f s\n", p.Table, p.Rows, p.Elapsed.Seconds())
}
