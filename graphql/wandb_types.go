package graphql

import (
	"context"

	"github.com/weftdev/weft/auth"
)

// field is a FieldDef that reads its value from the parent alone.
func field[P any](typ string, get func(P) any) FieldDef {
	return FieldDef{Type: typ, Resolve: func(_ context.Context, parent any, _ map[string]any) (any, error) {
		return get(parent.(P)), nil
	}}
}

func userType() *Type {
	return &Type{Name: "User", Fields: map[string]FieldDef{
		"id":            field("", func(p auth.Principal) any { return nodeID("User", p.UserID) }),
		"username":      field("", func(p auth.Principal) any { return p.UserID }),
		"name":          field("", func(p auth.Principal) any { return p.UserID }),
		"email":         field("", func(auth.Principal) any { return nil }),
		"admin":         field("", func(p auth.Principal) any { return p.Entity == auth.AllEntities && p.Role == auth.RoleAdmin }),
		"entity":        field("", func(p auth.Principal) any { return defaultEntity(p) }),
		"defaultEntity": field("Entity", viewerEntity),
	}}
}

// viewerEntity is the default entity of the viewer, which it may use.
func viewerEntity(p auth.Principal) any {
	e, err := entityAccess(p, defaultEntity(p))
	if err != nil {
		return nil
	}
	return e
}

func entityType() *Type {
	return &Type{Name: "Entity", Fields: map[string]FieldDef{
		"id":       field("", func(e entityRef) any { return nodeID("Entity", e.name) }),
		"name":     field("", func(e entityRef) any { return e.name }),
		"readOnly": field("", func(e entityRef) any { return e.readOnly }),
	}}
}

func projectType() *Type {
	return &Type{Name: "Project", Fields: map[string]FieldDef{
		"id":          field("", func(p projectRef) any { return nodeID("Project", p.entity+"/"+p.name) }),
		"name":        field("", func(p projectRef) any { return p.name }),
		"entityName":  field("", func(p projectRef) any { return p.entity }),
		"description": field("", func(p projectRef) any { return p.description }),
		"access":      field("", func(projectRef) any { return "PRIVATE" }),
		"repo":        field("", func(projectRef) any { return nil }),
		"dockerImage": field("", func(projectRef) any { return nil }),
		"entity": {Type: "Entity", Resolve: func(ctx context.Context, parent any, _ map[string]any) (any, error) {
			p, err := principal(ctx)
			if err != nil {
				return nil, err
			}
			return entityAccess(p, parent.(projectRef).entity)
		}},
	}}
}

func upsertPayloadType() *Type {
	return &Type{Name: "UpsertModelPayload", Fields: map[string]FieldDef{
		"model":   field("Project", func(p projectRef) any { return p }),
		"project": field("Project", func(p projectRef) any { return p }),
		// Nothing is inserted: every project name of a usable entity exists.
		"inserted": field("", func(projectRef) any { return false }),
	}}
}
