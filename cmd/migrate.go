package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/outdial/outdial/store"
)

func newMigrate() *cobra.Command {
	c := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the database's pending schema migrations (serve applies them at start too)",
		Long: `Apply the pending schema migrations to DATA/outdial.db, or to the PostgreSQL
database of --database-url, and nothing else: no listener, no dialer. serve
applies them at start as well; migrate lets an upgrade do it as a step of its own
(and see it fail there, not at the service's start). On PostgreSQL they are
applied in one transaction, under the lock nodes starting together take.

With --dry-run, list the migrations it would apply (version and file name) and
write nothing. A database written by a newer outdial is refused, unchanged.`,
		Args: cobra.NoArgs,
		RunE: runMigrate,
	}
	c.Flags().Bool("dry-run", false, "list the pending migrations and write nothing")
	addDatabaseURLFlag(c.Flags())
	return c
}

// migrator is a database whose schema migrations can be listed and applied:
// the SQLite file of a data directory, or a PostgreSQL database
// (--database-url).
type migrator interface {
	// Describe names the database for messages.
	Describe() string
	// Pending returns the database's schema version and the migrations not
	// applied yet, writing nothing.
	Pending(ctx context.Context) (current int, pending []store.Migration, err error)
	// Apply applies them and returns those applied.
	Apply(ctx context.Context) ([]store.Migration, error)
}

// sqliteMigrator is the database file of a data directory.
type sqliteMigrator struct{ path string }

func (m sqliteMigrator) Describe() string { return m.path }

func (m sqliteMigrator) Pending(ctx context.Context) (int, []store.Migration, error) {
	return store.PendingMigrations(ctx, m.path)
}

func (m sqliteMigrator) Apply(ctx context.Context) ([]store.Migration, error) {
	if err := createPrivate(m.path); err != nil {
		return nil, err
	}
	return store.Migrate(ctx, m.path)
}

// postgresMigrator is the PostgreSQL database at url.
type postgresMigrator struct{ url string }

func (m postgresMigrator) Describe() string { return redactURL(m.url) }

func (m postgresMigrator) Pending(ctx context.Context) (int, []store.Migration, error) {
	return store.PendingMigrations(ctx, m.url)
}

func (m postgresMigrator) Apply(ctx context.Context) ([]store.Migration, error) {
	return store.Migrate(ctx, m.url)
}

// openMigrator returns the database c's flags name; create makes a SQLite
// database's data directory when missing.
func openMigrator(c *cobra.Command, create bool) (migrator, error) {
	location, _, err := databaseLocation(c, create)
	if err != nil {
		return nil, err
	}
	if store.IsDatabaseURL(location) {
		return postgresMigrator{url: location}, nil
	}
	return sqliteMigrator{path: location}, nil
}

func runMigrate(c *cobra.Command, _ []string) error {
	dry, _ := c.Flags().GetBool("dry-run")
	// A dry run creates nothing, not even the data directory.
	m, err := openMigrator(c, !dry)
	if err != nil {
		return err
	}
	out := c.OutOrStdout()
	current, pending, err := m.Pending(c.Context())
	if err != nil {
		return err
	}
	if len(pending) == 0 {
		fmt.Fprintf(out, "%s is at schema version %d: no migration pending\n", m.Describe(), current)
		return nil
	}
	// The version the last migration reaches: this binary's for the
	// database's engine (SQLite and PostgreSQL number theirs apart).
	supported := pending[len(pending)-1].Version
	if dry {
		fmt.Fprintf(out, "%s is at schema version %d; %d migrations pending (to version %d):\n", m.Describe(), current, len(pending), supported)
		for _, p := range pending {
			fmt.Fprintf(out, "%d\t%s\n", p.Version, p.Name)
		}
		return nil
	}
	applied, err := m.Apply(c.Context())
	if err != nil {
		return err
	}
	for _, p := range applied {
		fmt.Fprintf(out, "applied %d\t%s\n", p.Version, p.Name)
	}
	fmt.Fprintf(out, "%s is at schema version %d\n", m.Describe(), supported)
	return nil
}
