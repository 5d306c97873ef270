package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Errors returned by authentication and authorisation. The HTTP layer maps
// ErrUnauthenticated to 401 and ErrForbidden to 403.
var (
	ErrUnauthenticated = errors.New("missing or invalid API key")
	ErrForbidden       = errors.New("forbidden")
)

// Role is a member's power within an entity.
type Role string

// Roles, weakest first.
const (
	RoleViewer Role = "viewer"
	RoleMember Role = "member"
	RoleAdmin  Role = "admin"
	// RoleWorker runs training jobs (weft trainer) and nothing else: it
	// may lease its entity's jobs and report on them, but not read or
	// write any project's data.
	RoleWorker Role = "worker"
)

// ParseRole validates a role name.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleViewer, RoleMember, RoleAdmin, RoleWorker:
		return r, nil
	}
	return "", fmt.Errorf("role %q is not one of admin, member, viewer, worker", s)
}

func (r Role) rank() int {
	switch r {
	case RoleViewer:
		return 1
	case RoleMember:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

// Access is what an operation needs.
type Access int

// Access levels.
const (
	Read Access = iota + 1
	Write
	// Admin manages what belongs to the entity or project rather than its
	// data: secrets, webhooks and automations.
	Admin
	// Work leases the entity's training jobs and reports on them: worker
	// and admin keys have it.
	Work
)

// AllEntities is the entity name of an instance-wide key (the key created on
// first start): it is a member of every entity with its role.
const AllEntities = "*"

// Principal is an authenticated caller.
type Principal struct {
	KeyID  string
	UserID string
	Entity string // AllEntities for instance-wide keys
	Role   Role
}

// Authorize checks that p may use project ("entity/project") with the given
// access. It validates the project id form first.
func (p Principal) Authorize(projectID string, need Access) error {
	entity, _, err := SplitProjectID(projectID)
	if err != nil {
		return err
	}
	return p.AuthorizeEntity(entity, need)
}

// AuthorizeEntity checks that p may act on entity with the given access.
func (p Principal) AuthorizeEntity(entity string, need Access) error {
	if p.Entity != AllEntities && p.Entity != entity {
		return fmt.Errorf("%w: this API key is not a member of entity %q", ErrForbidden, entity)
	}
	switch {
	case p.Role == RoleWorker && need != Work:
		return fmt.Errorf("%w: a worker key may only run training jobs; use a key with role viewer, member or admin", ErrForbidden)
	case need == Work && p.Role != RoleWorker && p.Role != RoleAdmin:
		return fmt.Errorf("%w: role %s cannot run training jobs; use a key with role worker", ErrForbidden, p.Role)
	}
	if need == Write && p.Role.rank() < RoleMember.rank() {
		return fmt.Errorf("%w: role %s cannot write; use a key with role member or admin", ErrForbidden, p.Role)
	}
	if need == Admin && p.Role.rank() < RoleAdmin.rank() {
		return fmt.Errorf("%w: role %s cannot manage secrets, webhooks or automations; use a key with role admin", ErrForbidden, p.Role)
	}
	return nil
}

// ErrBadProjectID marks a malformed project id.
var ErrBadProjectID = errors.New("bad project_id")

// SplitProjectID splits "entity/project" and validates both parts. Every
// project id a request names reaches storage through it (Authorize
// calls it), so it is the one place names are checked.
func SplitProjectID(projectID string) (entity, project string, err error) {
	if len(projectID) > 512 {
		return "", "", fmt.Errorf("%w: project_id is longer than 512 characters", ErrBadProjectID)
	}
	entity, project, ok := strings.Cut(projectID, "/")
	if !ok || entity == "" || project == "" || strings.Contains(project, "/") {
		return "", "", fmt.Errorf("%w: project_id %q must have the form entity/project", ErrBadProjectID, projectID)
	}
	for _, part := range []struct{ kind, name string }{{"entity", entity}, {"project", project}} {
		if msg := checkName(part.name); msg != "" {
			return "", "", fmt.Errorf("%w: project_id %q: the %s name %s; names use letters, digits, '-', '_' and '.'",
				ErrBadProjectID, projectID, part.kind, msg)
		}
	}
	return entity, project, nil
}

// ValidName reports whether name is a valid entity or project name:
// ASCII letters, digits, '-', '_' and '.', and never "." or anything
// with "..", so a name is always one plain path segment.
func ValidName(name string) bool { return name != "" && checkName(name) == "" }

// checkName says what is wrong with a non-empty entity or project name,
// or "".
func checkName(name string) string {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			r, _ := utf8.DecodeRuneInString(name[i:])
			return fmt.Sprintf("has %q at byte %d", r, i)
		}
	}
	if name == "." || strings.Contains(name, "..") {
		return "must not be \".\" or contain \"..\""
	}
	return ""
}

// Verifier turns an API key into a Principal. It returns ErrUnauthenticated
// for unknown or revoked keys.
type Verifier interface {
	Verify(ctx context.Context, apiKey string) (Principal, error)
}
