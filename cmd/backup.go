package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/outdial/outdial/store"
)

func newBackup() *cobra.Command {
	c := &cobra.Command{
		Use:   "backup --to FILE",
		Short: "Write a consistent copy of the database to a new file, also while serve runs",
		Long: `Write a consistent copy of DATA/outdial.db to FILE, which must not exist.

The copy is one snapshot of the database (SQLite's VACUUM INTO on a read-only
connection): a running serve keeps dialing and writing meanwhile, and the
database is not changed. FILE is written under a temporary name in its
directory and appears only once complete.

The copy holds provider credentials sealed with the server secret: keep a copy
of DATA/secret.key (or of OUTDIAL_SECRET_KEY) with it. To restore, put FILE as
outdial.db in a new data directory with that secret.key, and start serve there.
Uploads not yet used by a campaign (DATA/objects) are not in the database.

With --database-url (PostgreSQL) it copies nothing: it says to back the database
up with pg_dump and exits with status 2.`,
		Args: cobra.NoArgs,
		RunE: runBackup,
	}
	c.Flags().String("to", "", "file to write the copy to (must not exist)")
	addDatabaseURLFlag(c.Flags())
	return c
}

// pgDumpHint is backup's answer on PostgreSQL (exit status 2): the database
// server's own tool makes the consistent copy.
const pgDumpHint = "outdial backup: the database is PostgreSQL; back it up with pg_dump (for example pg_dump --format=custom --file=FILE \"$OUTDIAL_DATABASE_URL\"; docs/api.md section 8, backup)"

func runBackup(c *cobra.Command, _ []string) error {
	// On PostgreSQL: pg_dump, whatever else is given.
	if u, err := databaseURL(c.Flags()); err != nil {
		return err
	} else if u != "" {
		return &exitError{code: 2, msg: pgDumpHint}
	}
	to, _ := c.Flags().GetString("to")
	if to == "" {
		return errors.New(`required flag(s) "to" not set`)
	}
	// Interrupted, the copy stops and its temporary file is removed.
	ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	dir, err := c.Flags().GetString("data")
	if err != nil {
		return err
	}
	if err := checkDataDir(dir); err != nil {
		return err
	}
	// Not dataPaths: a backup must not create the data directory.
	dbPath := filepath.Join(dir, dbFileName)
	if _, err := os.Stat(dbPath); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup: no database in %s (%s does not exist)", dir, dbPath)
	}
	start := time.Now()
	if err := store.Backup(ctx, dbPath, to); err != nil {
		return err
	}
	st, err := os.Stat(to)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(c.OutOrStdout(), "backed up %s to %s: %d bytes in %.1f s\n", dbPath, to, st.Size(), time.Since(start).Seconds())
	keyPath := filepath.Join(dir, "secret.key")
	if lookupEnv("OUTDIAL_SECRET_KEY") != "" {
		fmt.Fprintln(c.OutOrStdout(), "the credentials in it are sealed with OUTDIAL_SECRET_KEY: keep that value with the copy")
	} else {
		fmt.Fprintf(c.OutOrStdout(), "the credentials in it are sealed with %s: keep a copy of that file with it\n", keyPath)
	}
	return nil
}
