package automations

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

func TestMatchEvent(t *testing.T) {
	reg := "acme/wandb-registry-models"
	base := storage.Automation{ProjectID: reg, Scope: ScopeRegistry, Event: storage.EventAddArtifactAlias, AliasRegex: "^prod", Enabled: true}
	with := func(mut func(a *storage.Automation)) storage.Automation { a := base; mut(&a); return a }
	alias := func(collection string, aliases ...string) storage.ArtifactEvent {
		return storage.ArtifactEvent{Type: storage.EventAddArtifactAlias, ProjectID: reg, Collection: collection, Aliases: aliases}
	}
	link := func(aliases ...string) storage.ArtifactEvent {
		return storage.ArtifactEvent{Type: storage.EventLinkArtifact, ProjectID: reg, Collection: "clf", Aliases: aliases}
	}
	tests := []struct {
		name  string
		a     storage.Automation
		e     storage.ArtifactEvent
		alias string
		fires bool
	}{
		{"registry scope, any collection", base, alias("anything", "production"), "production", true},
		{"regex matches anywhere", with(func(a *storage.Automation) { a.AliasRegex = "prod" }), alias("c", "preprod"), "preprod", true},
		{"regex does not match", base, alias("c", "staging"), "", false},
		{"disabled", with(func(a *storage.Automation) { a.Enabled = false }), alias("c", "prod"), "", false},
		{"other project", with(func(a *storage.Automation) { a.ProjectID = "acme/other" }), alias("c", "prod"), "", false},
		{"other event", base, link("prod"), "", false},
		{"collection scope, its collection", with(func(a *storage.Automation) { a.Scope, a.Collection = ScopeCollection, "clf" }), alias("clf", "prod"), "prod", true},
		{"collection scope, another", with(func(a *storage.Automation) { a.Scope, a.Collection = ScopeCollection, "clf" }), alias("x", "prod"), "", false},
		{"project filter matches", with(func(a *storage.Automation) { a.Scope, a.CollectionFilter = ScopeProject, "clf" }), alias("clf", "prod"), "prod", true},
		{"project filter excludes", with(func(a *storage.Automation) { a.Scope, a.CollectionFilter = ScopeProject, "clf" }), alias("x", "prod"), "", false},
		{"link without regex", with(func(a *storage.Automation) { a.Event, a.AliasRegex = storage.EventLinkArtifact, "" }), link(), "", true},
		{"link, first alias", with(func(a *storage.Automation) { a.Event, a.AliasRegex = storage.EventLinkArtifact, "" }), link("a", "b"), "a", true},
		{"link regex picks the alias", with(func(a *storage.Automation) { a.Event = storage.EventLinkArtifact }), link("latest-x", "prod-1"), "prod-1", true},
		{"link regex with no alias", with(func(a *storage.Automation) { a.Event = storage.EventLinkArtifact }), link(), "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			alias, fires := matchEvent(tc.a, tc.e)
			if fires != tc.fires || alias != tc.alias {
				t.Fatalf("matchEvent = %q, %v; want %q, %v", alias, fires, tc.alias, tc.fires)
			}
		})
	}
}

func TestEventVars(t *testing.T) {
	e := storage.ArtifactEvent{ID: "ev1", Type: storage.EventLinkArtifact, ProjectID: "acme/wandb-registry-m", Collection: "clf",
		VersionIndex: 4, Digest: "abc", Author: "u1", At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Metadata: topLevelMetadata(json.RawMessage(`{"acc": 0.9, "nested": {"a": 1}}`))}
	vars := eventVars(e, "", credentials{token: "t", secretName: "SIGN", secret: "s"})
	tests := map[string]string{
		VarProjectName: `"wandb-registry-m"`, VarEntityName: `"acme"`, VarEventType: `"LINK_ARTIFACT"`,
		VarEventAuthor: `"u1"`, VarCollectionName: `"clf"`, VarArtifactVersion: `"weave:///acme/wandb-registry-m/object/clf:abc"`,
		VarArtifactVersionString: `"acme/wandb-registry-m/clf:v4"`, VarArtifactVersionIndex: `4`, VarAlias: `""`,
		VarEventID: `"ev1"`, VarEventTime: `"2025-01-02T03:04:05Z"`, "artifact_metadata.acc": `0.9`,
		"artifact_metadata.nested": `{"a":1}`, "artifact_metadata.missing": `null`, VarAccessToken: `"t"`, "SIGN": `"s"`,
	}
	for name, want := range tests {
		got, ok := vars(name)
		if !ok || string(got) != want {
			t.Errorf("%s = %s (%v), want %s", name, got, ok, want)
		}
	}
	if _, ok := vars("OTHER"); ok {
		t.Error("a secret the webhook does not have has a value")
	}
}

func TestTopLevelMetadata(t *testing.T) {
	big := `"` + strings.Repeat("x", maxMetadataValueBytes) + `"`
	for in, want := range map[string]string{
		`{"a":1,"b":{"c":2}}`:           `{"a":1,"b":{"c":2}}`,
		`[1,2]`:                         `{}`,
		`"text"`:                        `{}`,
		`{"small":1,"big":` + big + `}`: `{"small":1}`,
	} {
		if got := string(topLevelMetadata(json.RawMessage(in))); got != want {
			t.Errorf("topLevelMetadata(%.30s) = %.60s, want %s", in, got, want)
		}
	}
}
