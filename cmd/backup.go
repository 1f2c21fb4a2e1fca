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
Uploads not yet used by a campaign (DATA/objects) are not in the database.`,
		Args: cobra.NoArgs,
		RunE: runBackup,
	}
	c.Flags().String("to", "", "file to write the copy to (must not exist)")
	_ = c.MarkFlagRequired("to")
	return c
}

func runBackup(c *cobra.Command, _ []string) error {
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
	to, _ := c.Flags().GetString("to")
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
