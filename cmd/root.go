// Package cmd wires the outdial binary with cobra: flags and their
// OUTDIAL_* environment variables, building the store, object store, dialer
// and web server, and signal handling. It holds no business logic.
package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/outdial/outdial/store"
)

// Version is the binary's version, set at build time with
// -ldflags "-X github.com/outdial/outdial/cmd.Version=v1.2.3".
var Version = "dev"

// Execute runs the command line and returns the process exit code.
func Execute() int {
	if err := newRoot().Execute(); err != nil {
		// A database of a newer Outdial is refused in one line naming both
		// versions (API.md 18), whichever command opened it.
		var tooNew *store.SchemaTooNewError
		if errors.As(err, &tooNew) {
			fmt.Fprintln(os.Stderr, tooNew.Error())
			return 1
		}
		var exit *exitError
		if errors.As(err, &exit) {
			fmt.Fprintln(os.Stderr, exit.msg)
			return exit.code
		}
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	return 0
}

// exitError ends the process with status code, printing msg alone on
// stderr (no "error: " before it): an answer that is not a failure of the
// command, such as backup's on PostgreSQL (status 2).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "outdial",
		Short:         "Outbound voice campaigns in one binary",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			return bindEnv(c.Flags())
		},
	}
	root.PersistentFlags().String("data", "./outdial-data", "data directory: SQLite database, object store, secret key")
	root.AddCommand(newServe(), newDemo(), newAPIKey(), newUser(), newBackup(), newVersion(), newMigrate(), newDoctor(), newCopyData())
	return root
}

// bindEnv gives every flag not set on the command line the value of
// OUTDIAL_<FLAG> (upper case, dashes as underscores) when that is set.
func bindEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed {
			return
		}
		env := "OUTDIAL_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("%s: %w", env, serr)
			}
		}
	})
	return err
}

// dbFileName is the database's file name in the data directory.
const dbFileName = "outdial.db"

func dataPaths(c *cobra.Command) (dir, dbPath, keyPath string, err error) {
	dir, err = c.Flags().GetString("data")
	if err != nil {
		return "", "", "", err
	}
	if err := checkDataDir(dir); err != nil {
		return "", "", "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", "", fmt.Errorf("create data directory: %w", err)
	}
	return dir, filepath.Join(dir, dbFileName), filepath.Join(dir, "secret.key"), nil
}
