package automations

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/weftdev/weft/automations/template"
	"github.com/weftdev/weft/storage"
)

// Limits of what is saved.
const (
	MaxNameLen        = 128
	MaxDescriptionLen = 2048
	MaxSecretBytes    = 16 << 10
	MaxURLLen         = 2048
	MaxAliasRegexLen  = 256
	// RegistryPrefix starts the name of a registry's project.
	RegistryPrefix = "wandb-registry-"
)

// Scope types.
const (
	ScopeProject    = "project"
	ScopeRegistry   = "registry"
	ScopeCollection = "collection"
)

var secretName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// invalid is a bad field: HTTP 400 naming the field and the fix.
func invalid(field, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", field, fmt.Sprintf(format, args...), storage.ErrInvalidArgument)
}

func checkSecretName(name string) error {
	if !secretName.MatchString(name) {
		return invalid("name", "%q: use 1 to 64 letters, digits or _, starting with a letter or _", name)
	}
	if reservedName(name) {
		return invalid("name", "%q is a payload variable; choose another name", name)
	}
	return nil
}

// checkName refuses empty, over-long or control-character names.
func checkName(field, name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return invalid(field, "must not be empty")
	case utf8.RuneCountInString(name) > MaxNameLen:
		return invalid(field, "must be at most %d characters", MaxNameLen)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return invalid(field, "must not contain control characters")
	}
	return nil
}

// IsRegistry reports whether a project is a registry's.
func IsRegistry(projectID string) bool {
	_, project, _ := strings.Cut(projectID, "/")
	return strings.HasPrefix(project, RegistryPrefix) && len(project) > len(RegistryPrefix)
}

// checkScope applies the scope rules: registry and collection scopes
// live in a registry's project, a collection scope names its collection,
// and only a project scope takes a collection filter.
func checkScope(a storage.Automation) error {
	switch a.Scope {
	case ScopeProject:
		if a.Collection != "" {
			return invalid("scope.collection", "only a collection scope names a collection; use collection_filter with a project scope")
		}
		return checkCollection("collection_filter", a.CollectionFilter, true)
	case ScopeRegistry, ScopeCollection:
		if !IsRegistry(a.ProjectID) {
			return invalid("scope.type", "a %s scope needs a registry's project_id (<entity>/%s<name>), got %q", a.Scope, RegistryPrefix, a.ProjectID)
		}
		if a.CollectionFilter != "" {
			return invalid("collection_filter", "only a project scope takes a collection filter")
		}
		if a.Scope == ScopeRegistry && a.Collection != "" {
			return invalid("scope.collection", "a registry scope covers every collection; use type collection for one")
		}
		return checkCollection("scope.collection", a.Collection, a.Scope == ScopeRegistry)
	}
	return invalid("scope.type", "%q is not one of project, registry, collection", a.Scope)
}

func checkCollection(field, name string, optional bool) error {
	if name == "" && optional {
		return nil
	}
	if err := storage.ValidateObjectID(name); err != nil {
		return invalid(field, "%v", err)
	}
	return nil
}

// checkEvent normalises the event (LINK_MODEL is the legacy wire name of
// LINK_ARTIFACT) and checks the alias regex: required for the alias
// event, a valid RE2 expression, matched anywhere in the alias.
func checkEvent(a *storage.Automation) error {
	if a.Event == "LINK_MODEL" {
		a.Event = storage.EventLinkArtifact
	}
	if a.Event == storage.EventCallAlert {
		return checkAlert(a)
	}
	if a.Event != storage.EventLinkArtifact && a.Event != storage.EventAddArtifactAlias {
		return invalid("event", "%q is not one of LINK_ARTIFACT, ADD_ARTIFACT_ALIAS, CALL_ALERT", a.Event)
	}
	if a.Condition == "null" {
		a.Condition = ""
	}
	if a.Condition != "" {
		return invalid("condition", "only a CALL_ALERT automation has a condition")
	}
	if a.AliasRegex == "" {
		if a.Event == storage.EventAddArtifactAlias {
			return invalid("alias_regex", "required for ADD_ARTIFACT_ALIAS; use .* to match every alias")
		}
		return nil
	}
	if len(a.AliasRegex) > MaxAliasRegexLen {
		return invalid("alias_regex", "must be at most %d bytes", MaxAliasRegexLen)
	}
	if _, err := regexp.Compile(a.AliasRegex); err != nil {
		return invalid("alias_regex", "%v", err)
	}
	return nil
}

// checkAlert checks a CALL_ALERT automation: a project scope without
// collection or alias filters, and a condition, stored in its checked
// form.
func checkAlert(a *storage.Automation) error {
	if a.Scope != ScopeProject {
		return invalid("scope.type", "a CALL_ALERT automation watches its project's calls; use type project")
	}
	if a.CollectionFilter != "" || a.AliasRegex != "" {
		return invalid("collection_filter", "a CALL_ALERT automation takes no collection_filter or alias_regex")
	}
	c, err := ParseCondition(json.RawMessage(a.Condition))
	if err != nil {
		return err
	}
	norm, err := json.Marshal(c)
	if err != nil {
		return err
	}
	a.Condition = string(norm)
	return nil
}

// checkPayload parses the template, refuses variables the webhook does
// not offer, and renders it with sample values: the result must be JSON,
// since deliveries are sent as application/json.
func checkPayload(a storage.Automation, w storage.Webhook, maxBytes int) error {
	tmpl, err := template.Parse(a.Payload)
	if err != nil {
		return invalid("payload", "%v", err)
	}
	sample := credentials{token: "token", secretName: w.SigningSecret, secret: "secret"}
	known, vars, docs := knownVars(w), eventVars(sampleEvent(a.ProjectID, time.Unix(0, 0)), "alias", sample), "artifact_metadata.<KEY>"
	if a.Event == storage.EventCallAlert {
		cond, _ := ParseCondition(json.RawMessage(a.Condition)) // checked before
		known, vars, docs = knownAlertVars(w), alertVars(sampleAlertNotice(a, cond, time.Unix(0, 0)), sample), strings.Join(alertVarNames, ", ")
	}
	if err := tmpl.Check(known); err != nil {
		return invalid("payload", "%v (webhook %s offers the variables of the docs, %s%s)", err, w.Name, docs, offered(w))
	}
	body, err := tmpl.Render(vars, maxBytes)
	if err != nil {
		return invalid("payload", "%v", err)
	}
	if !json.Valid(body) {
		var v any
		err := json.Unmarshal(body, &v)
		return invalid("payload", "not JSON once variables are filled in (%v); deliveries are sent as application/json", err)
	}
	return nil
}

func offered(w storage.Webhook) string {
	var out string
	if w.AccessTokenSecret != "" {
		out += ", ACCESS_TOKEN"
	}
	if w.SigningSecret != "" {
		out += ", $" + w.SigningSecret
	}
	return out
}
