package store

// Role is what a user or an API key may do in its organization (API.md
// 17): a viewer reads, an operator also runs campaigns, an admin does
// everything. Each role allows what the ones below it allow.
type Role string

// The three roles, from the least to the most allowed.
const (
	RoleViewer   Role = "viewer"
	RoleOperator Role = "operator"
	RoleAdmin    Role = "admin"
)

// Roles lists the roles from the least to the most allowed.
func Roles() []Role { return []Role{RoleViewer, RoleOperator, RoleAdmin} }

// rank orders the roles; 0 is not a role.
func (r Role) rank() int {
	switch r {
	case RoleViewer:
		return 1
	case RoleOperator:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

// ParseRole returns the role named s ("viewer", "operator" or "admin",
// exactly), and false for anything else.
func ParseRole(s string) (Role, bool) {
	r := Role(s)
	return r, r.rank() > 0
}

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool { return r.rank() > 0 }

// Allows reports whether r may do what needs the role need: r is need or
// above it. A role that is not one of the three allows nothing and is
// allowed by nothing.
func (r Role) Allows(need Role) bool {
	return r.rank() > 0 && need.rank() > 0 && r.rank() >= need.rank()
}

// String returns the role's name.
func (r Role) String() string { return string(r) }

// checkRole is EINVALID for a role outside the three.
func checkRole(r Role) error {
	if !r.Valid() {
		return Errorf(EINVALID, "role %q is not one of viewer, operator, admin", string(r))
	}
	return nil
}
