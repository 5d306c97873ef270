package graphql

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weftdev/weft/auth"
)

// run executes query as a member of acme and returns the JSON answer.
func run(t *testing.T, query string, vars map[string]any, opName string) string {
	t.Helper()
	ctx := withPrincipal(context.Background(), auth.Principal{UserID: "ada", Entity: "acme", Role: auth.RoleMember})
	out, err := json.Marshal(WandbSchema().Execute(ctx, Request{Query: query, Variables: vars, OperationName: opName}))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestExecuteLanguage covers the language features clients may use on the
// served fields; answers are compared as text, so key order counts.
func TestExecuteLanguage(t *testing.T) {
	tests := []struct {
		name, query string
		vars        map[string]any
		op          string
		want        string
	}{
		{"shorthand and order", `{ viewer { entity username } }`, nil, "",
			`{"data":{"viewer":{"entity":"acme","username":"ada"}}}`},
		{"aliases", `query { me: viewer { u: username } p: project(name: "x") { n: name e: entityName } }`, nil, "",
			`{"data":{"me":{"u":"ada"},"p":{"n":"x","e":"acme"}}}`},
		{"typename", `{ viewer { __typename defaultEntity { __typename name } } }`, nil, "",
			`{"data":{"viewer":{"__typename":"User","defaultEntity":{"__typename":"Entity","name":"acme"}}}}`},
		{"fragments merge", `query Q { viewer { ...U defaultEntity { id } } } fragment U on User { username defaultEntity { name } }`, nil, "",
			`{"data":{"viewer":{"username":"ada","defaultEntity":{"name":"acme","id":"RW50aXR5OmFjbWU="}}}}`},
		{"inline fragment", `{ viewer { ... on User { name } ... { admin } } }`, nil, "",
			`{"data":{"viewer":{"name":"ada","admin":false}}}`},
		{"skip and include", `query ($yes: Boolean = true) { viewer { a: name @include(if: $yes) b: name @skip(if: $yes) c: name @include(if: false) } }`, nil, "",
			`{"data":{"viewer":{"a":"ada"}}}`},
		{"variables and defaults", `query ($p: String = "fallback", $e: String) { project(name: $p, entityName: $e) { name entityName } }`, map[string]any{"e": "acme"}, "",
			`{"data":{"project":{"name":"fallback","entityName":"acme"}}}`},
		{"operation by name", `query A { viewer { name } } query B { viewer { entity } }`, nil, "B",
			`{"data":{"viewer":{"entity":"acme"}}}`},
		{"comments and commas", "# who\n{ viewer { name, , username } }", nil, "",
			`{"data":{"viewer":{"name":"ada","username":"ada"}}}`},
		{"upsert echoes the description", `mutation { upsertProject(input: {name: "p", description: "d"}) { project { name description entity { name readOnly } } inserted } }`, nil, "",
			`{"data":{"upsertProject":{"project":{"name":"p","description":"d","entity":{"name":"acme","readOnly":false}},"inserted":false}}}`},
		{"resolver error nulls its field only", `{ viewer { name } entity(name: "rival") { name } }`, nil, "",
			`{"data":{"viewer":{"name":"ada"},"entity":null},"errors":[{"message":"forbidden: this API key is not a member of entity \"rival\"","locations":[{"line":1,"column":19}],"path":["entity"]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := run(t, tt.query, tt.vars, tt.op); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestExecuteRefusesUnservedDocuments: anything outside the served subset
// fails whole, before any resolver runs, naming what is wrong.
func TestExecuteRefusesUnservedDocuments(t *testing.T) {
	tests := []struct {
		name, query string
		vars        map[string]any
		op          string
		want        []string
	}{
		{"unknown root field", `{ runs { name } }`, nil, "", []string{`Cannot query field "runs" on type "Query"`, "Weave SDKs send at init", "viewer"}},
		{"unknown nested field", `{ viewer { teams { edges { node { name } } } } }`, nil, "", []string{`"teams" on type "User"`, "defaultEntity, email"}},
		{"introspection", `{ __schema { types { name } } }`, nil, "", []string{`"__schema"`}},
		{"subscription", `subscription { viewer { name } }`, nil, "", []string{"Syntax Error", "subscriptions"}},
		{"unknown mutation", `mutation { deleteModel(id: "x") { success } }`, nil, "", []string{`"deleteModel" on type "Mutation"`}},
		{"scalar with selection", `{ viewer { name { x } } }`, nil, "", []string{"must not have a selection"}},
		{"object without selection", `{ viewer }`, nil, "", []string{"must have a selection"}},
		{"unknown argument", `{ project(name: "p", first: 3) { name } }`, nil, "", []string{`Unknown argument "first"`}},
		{"undefined variable", `{ project(name: $p) { name } }`, nil, "", []string{`"$p" is not defined`}},
		{"missing required variable", `query ($p: String!) { project(name: $p) { name } }`, nil, "", []string{`"$p" of required type "String!"`}},
		{"unknown fragment", `{ viewer { ...Nope } }`, nil, "", []string{`Unknown fragment "Nope"`}},
		{"fragment cycle", `{ viewer { ...A } } fragment A on User { ...B } fragment B on User { ...A }`, nil, "", []string{"within itself"}},
		{"fragment on another type", `{ viewer { ... on Project { name } } }`, nil, "", []string{`Fragment on "Project"`}},
		{"unknown directive", `{ viewer { name @deprecated } }`, nil, "", []string{`"@deprecated"`}},
		{"several operations unnamed", `query A { viewer { name } } query B { viewer { name } }`, nil, "", []string{"operationName"}},
		{"unknown operation name", `query A { viewer { name } }`, nil, "Z", []string{`"Z"`}},
		{"syntax error located", "{\n  viewer {\n    name(\n", nil, "", []string{"Syntax Error", "line 4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, tt.query, tt.vars, tt.op)
			if strings.Contains(got, `"data"`) {
				t.Errorf("an unserved document got data: %s", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) && !strings.Contains(got, strings.ReplaceAll(w, `"`, `\"`)) {
					t.Errorf("answer %s does not mention %s", got, w)
				}
			}
		})
	}
}
