package cmd

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outdial/outdial/store"
)

// defaultCLIPublicURL is the console's address in the links the CLI
// prints when neither --public-url nor OUTDIAL_PUBLIC_URL is given: serve's
// default public URL (http://<its default --addr>).
const defaultCLIPublicURL = "http://127.0.0.1:8080"

// parseRoleFlag returns the role named by --role, or an exitError with
// status 2 naming the three.
func parseRoleFlag(s string) (store.Role, error) {
	r, ok := store.ParseRole(s)
	if !ok {
		return "", &exitError{code: 2, msg: fmt.Sprintf("--role must be admin, operator or viewer, not %q", s)}
	}
	return r, nil
}

// linkBase returns --public-url without a trailing slash, checked as serve
// checks it (an absolute http(s) URL), with status 2 when it is not one.
func linkBase(c *cobra.Command) (string, error) {
	raw, _ := c.Flags().GetString("public-url")
	if raw == "" {
		raw = defaultCLIPublicURL
	}
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", &exitError{code: 2, msg: fmt.Sprintf("--public-url must be an absolute http(s) URL, got %q", raw)}
	}
	return u.String(), nil
}

func newUser() *cobra.Command {
	c := &cobra.Command{Use: "user", Short: "Manage the people who sign in to the console"}
	addDatabaseURLFlag(c.PersistentFlags())
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a user; the link that sets its password is printed alone on the last line",
		Long: `Create a user of an organization (created on first use) with a role:
admin, operator or viewer. The last line printed is a link that sets the
user's password: it works once, within 24 hours. Give the address browsers
reach the console at with --public-url (or OUTDIAL_PUBLIC_URL).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			org, _ := c.Flags().GetString("org")
			email, _ := c.Flags().GetString("email")
			roleName, _ := c.Flags().GetString("role")
			role, err := parseRoleFlag(roleName)
			if err != nil {
				return err
			}
			base, err := linkBase(c)
			if err != nil {
				return err
			}
			return withDB(c, func(ctx context.Context, db *store.DB) error {
				u, token, err := db.CreateUserInOrg(ctx, org, email, role)
				if err != nil {
					return err
				}
				out := c.OutOrStdout()
				fmt.Fprintf(out, "created user %d %s (%s) in organization %q (id %d); the link sets the password, once, within %s:\n",
					u.ID, u.Email, u.Role, strings.TrimSpace(org), u.OrganizationID, store.PasswordLinkTTL)
				fmt.Fprintf(out, "%s/console/set-password?token=%s\n", base, url.QueryEscape(token))
				return nil
			})
		},
	}
	create.Flags().String("org", "", "organization name (created on first use)")
	create.Flags().String("email", "", "the user's email address, with which it signs in")
	create.Flags().String("role", "", "admin, operator or viewer")
	create.Flags().String("public-url", "", "base URL browsers reach the console at (default "+defaultCLIPublicURL+")")
	for _, name := range []string{"org", "email", "role"} {
		_ = create.MarkFlagRequired(name)
	}
	c.AddCommand(create)
	return c
}
