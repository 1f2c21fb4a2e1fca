package cmd

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/outdial/outdial/store"
)

func newAPIKey() *cobra.Command {
	c := &cobra.Command{Use: "apikey", Short: "Manage API keys"}
	addDatabaseURLFlag(c.PersistentFlags())
	create := &cobra.Command{
		Use:   "create",
		Short: "Create an API key; the key is printed alone on the last line",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			org, _ := c.Flags().GetString("org")
			name, _ := c.Flags().GetString("name")
			roleName, _ := c.Flags().GetString("role")
			role, err := parseRoleFlag(roleName)
			if err != nil {
				return err
			}
			return withDB(c, func(ctx context.Context, db *store.DB) error {
				k, key, err := db.CreateAPIKey(ctx, org, name, role)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "created api key %d (role %s) for organization %q (id %d)\n", k.ID, k.Role, k.OrganizationName, k.OrganizationID)
				fmt.Fprintln(c.OutOrStdout(), key.Reveal())
				return nil
			})
		},
	}
	create.Flags().String("org", "", "organization name (created on first use)")
	create.Flags().String("name", "", "label of the key")
	create.Flags().String("role", string(store.RoleAdmin), "what the key may do: admin, operator or viewer")
	_ = create.MarkFlagRequired("org")

	list := &cobra.Command{
		Use:   "list",
		Short: "List API keys",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withDB(c, func(ctx context.Context, db *store.DB) error {
				keys, err := db.ListAPIKeys(ctx)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tORGANIZATION\tNAME\tROLE\tPREFIX\tCREATED\tREVOKED")
				for _, k := range keys {
					revoked := "-"
					if k.RevokedAt != nil {
						revoked = k.RevokedAt.Format("2006-01-02T15:04:05Z")
					}
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s…\t%s\t%s\n", k.ID, k.OrganizationName, k.Name, k.Role, k.Prefix,
						k.CreatedAt.Format("2006-01-02T15:04:05Z"), revoked)
				}
				return tw.Flush()
			})
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API key",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return fmt.Errorf("key id must be an integer: %q", args[0])
			}
			return withDB(c, func(ctx context.Context, db *store.DB) error {
				if err := db.RevokeAPIKey(ctx, id); err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "revoked api key %d\n", id)
				return nil
			})
		},
	}
	c.AddCommand(create, list, revoke)
	return c
}

// withDB opens the command's database (DATA/outdial.db, created with the
// data directory and the secret key on first use, or --database-url's),
// runs fn and closes it.
func withDB(c *cobra.Command, fn func(context.Context, *store.DB) error) error {
	location, keyPath, err := databaseLocation(c, true)
	if err != nil {
		return err
	}
	db, _, err := openStore(c.Context(), location, keyPath, false)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(c.Context(), db)
}
