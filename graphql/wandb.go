package graphql

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/weftdev/weft/auth"
)

// The W&B API subset the Weave SDKs use when they start: who the key's
// user is and its default entity (weave.init("project") without an
// entity), and whether a project exists, creating it otherwise.
//
// Weft has no user or project registry. A key's user is its user id (the
// --user of weft keys create), which is also the user name; the default
// entity is the key's entity, or for an instance-wide key the user id.
// Every project name of an entity the key may use exists: a lookup
// answers it after checking read access, an upsert after checking write
// access, and nothing is stored.

type principalKey struct{}

// withPrincipal stores the authenticated caller for the resolvers.
func withPrincipal(ctx context.Context, p auth.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

func principal(ctx context.Context) (auth.Principal, error) {
	p, ok := ctx.Value(principalKey{}).(auth.Principal)
	if !ok {
		return auth.Principal{}, auth.ErrUnauthenticated
	}
	return p, nil
}

// defaultEntity is the entity init uses when the project names none.
func defaultEntity(p auth.Principal) string {
	if p.Entity == auth.AllEntities {
		return p.UserID
	}
	return p.Entity
}

// entityRef and projectRef are the values Entity and Project fields
// resolve from.
type entityRef struct {
	name     string
	readOnly bool
}

type projectRef struct {
	entity, name string
	description  any // echoed from an upsert; nil otherwise
}

// nodeID is a W&B-style opaque id: base64 of "Type:key".
func nodeID(typ, key string) string {
	return base64.StdEncoding.EncodeToString([]byte(typ + ":" + key))
}

// WandbSchema is the W&B GraphQL subset weft serves.
func WandbSchema() *Schema {
	hint := "Weft answers the W&B queries the Weave SDKs send at init: viewer, project (or model), entity and the upsertModel mutation."
	return &Schema{Query: "Query", Mutation: "Mutation", Types: map[string]*Type{
		"Query": {Name: "Query", Hint: hint, Fields: map[string]FieldDef{
			"viewer":  {Type: "User", Resolve: resolveViewer},
			"entity":  {Type: "Entity", Args: []string{"name"}, Resolve: resolveEntity},
			"project": {Type: "Project", Args: []string{"name", "entityName"}, Resolve: resolveProject},
			"model":   {Type: "Project", Args: []string{"name", "entityName"}, Resolve: resolveProject},
		}},
		"Mutation": {Name: "Mutation", Hint: hint, Fields: map[string]FieldDef{
			"upsertModel":   {Type: "UpsertModelPayload", Args: []string{"input"}, Resolve: resolveUpsert},
			"upsertProject": {Type: "UpsertModelPayload", Args: []string{"input"}, Resolve: resolveUpsert},
		}},
		"User":               userType(),
		"Entity":             entityType(),
		"Project":            projectType(),
		"UpsertModelPayload": upsertPayloadType(),
	}}
}

func resolveViewer(ctx context.Context, _ any, _ map[string]any) (any, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// entityAccess names the entity and says whether p may read it and
// whether it may only read it.
func entityAccess(p auth.Principal, entity string) (entityRef, error) {
	if err := p.Authorize(entity+"/_", auth.Read); err != nil {
		if errors.Is(err, auth.ErrBadProjectID) {
			return entityRef{}, fmt.Errorf("entity name %q is not valid", entity)
		}
		return entityRef{}, err
	}
	return entityRef{name: entity, readOnly: p.Authorize(entity+"/_", auth.Write) != nil}, nil
}

func resolveEntity(ctx context.Context, _ any, args map[string]any) (any, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	name, err := stringArg(args, "name", "")
	if err != nil {
		return nil, err
	}
	return entityAccess(p, name)
}

func resolveProject(ctx context.Context, _ any, args map[string]any) (any, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	return projectArgs(p, args, auth.Read)
}

// projectArgs reads name and entityName (default: the key's default
// entity) and checks p's access to the project.
func projectArgs(p auth.Principal, args map[string]any, need auth.Access) (projectRef, error) {
	name, err := stringArg(args, "name", "")
	if err != nil {
		return projectRef{}, err
	}
	entity, err := stringArg(args, "entityName", defaultEntity(p))
	if err != nil {
		return projectRef{}, err
	}
	if err := p.Authorize(entity+"/"+name, need); err != nil {
		return projectRef{}, err
	}
	return projectRef{entity: entity, name: name}, nil
}

func resolveUpsert(ctx context.Context, _ any, args map[string]any) (any, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	input, ok := args["input"].(map[string]any)
	if !ok {
		return nil, errors.New(`argument "input" is required: {name: String!, entityName: String, description: String}`)
	}
	proj, err := projectArgs(p, input, auth.Write)
	if err != nil {
		return nil, err
	}
	proj.description = input["description"]
	return proj, nil
}

// stringArg reads a string argument; absent or null gives def, and an
// empty def makes the argument required.
func stringArg(args map[string]any, name, def string) (string, error) {
	v, ok := args[name]
	if !ok || v == nil {
		if def == "" {
			return "", fmt.Errorf("argument %q is required", name)
		}
		return def, nil
	}
	s, ok := v.(string)
	if !ok || s == "" {
		return "", fmt.Errorf("argument %q must be a non-empty string", name)
	}
	return s, nil
}
