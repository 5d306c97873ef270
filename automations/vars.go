package automations

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weftdev/weft/automations/template"
	"github.com/weftdev/weft/storage"
)

// Payload variables: the seed's table, plus alias, event_id, event_time
// and artifact_version_index, which let receivers deduplicate and order.
const (
	VarProjectName           = "project_name"
	VarEntityName            = "entity_name"
	VarEventType             = "event_type"
	VarEventAuthor           = "event_author"
	VarCollectionName        = "artifact_collection_name"
	VarArtifactVersion       = "artifact_version"
	VarArtifactVersionString = "artifact_version_string"
	VarArtifactVersionIndex  = "artifact_version_index"
	VarAlias                 = "alias"
	VarEventID               = "event_id"
	VarEventTime             = "event_time"
	VarAccessToken           = "ACCESS_TOKEN"
	MetadataPrefix           = "artifact_metadata."
)

// maskedSecret stands for secret values in the delivery history.
const maskedSecret = "[secret]"

// maxMetadataValueBytes: larger metadata values are left out of events.
const maxMetadataValueBytes = 16 << 10

var builtinVars = []string{VarProjectName, VarEntityName, VarEventType, VarEventAuthor, VarCollectionName,
	VarArtifactVersion, VarArtifactVersionString, VarArtifactVersionIndex, VarAlias, VarEventID, VarEventTime}

// reservedName reports names a secret may not take: they are variables.
func reservedName(name string) bool {
	return name == VarAccessToken || slices.Contains(builtinVars, name) || slices.Contains(alertVarNames, name)
}

// knownVars says which variables payloads sent to w may use: the
// builtins, top-level metadata keys, ACCESS_TOKEN when w has an access
// token, and the name of w's secret.
func knownVars(w storage.Webhook) func(string) bool {
	return func(name string) bool {
		switch {
		case slices.Contains(builtinVars, name):
			return true
		case strings.HasPrefix(name, MetadataPrefix):
			return len(name) > len(MetadataPrefix) && !strings.Contains(name[len(MetadataPrefix):], ".")
		case name == VarAccessToken:
			return w.AccessTokenSecret != ""
		}
		return name == w.SigningSecret && name != ""
	}
}

// credentials are a webhook's opened secrets, as payloads see them.
type credentials struct {
	token, secretName, secret string
}

func (c credentials) masked() credentials {
	if c.token != "" {
		c.token = maskedSecret
	}
	if c.secret != "" {
		c.secret = maskedSecret
	}
	return c
}

// eventVars is an event's variables for one delivery: alias is the
// alias the automation matched ("" for a link without one).
func eventVars(e storage.ArtifactEvent, alias string, c credentials) template.Lookup {
	entity, project, _ := strings.Cut(e.ProjectID, "/")
	selector := alias
	if selector == "" {
		selector = "v" + strconv.FormatInt(e.VersionIndex, 10)
	}
	fixed := map[string]string{
		VarProjectName: project, VarEntityName: entity, VarEventType: e.Type, VarEventAuthor: e.Author,
		VarCollectionName:        e.Collection,
		VarArtifactVersion:       "weave:///" + e.ProjectID + "/object/" + e.Collection + ":" + e.Digest,
		VarArtifactVersionString: e.ProjectID + "/" + e.Collection + ":" + selector,
		VarAlias:                 alias, VarEventID: e.ID, VarEventTime: e.At.UTC().Format(time.RFC3339Nano),
	}
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(e.Metadata, &meta) // stored events hold an object
	return func(name string) (json.RawMessage, bool) {
		if v, ok := fixed[name]; ok {
			return template.String(v), true
		}
		switch {
		case name == VarArtifactVersionIndex:
			return json.RawMessage(strconv.FormatInt(e.VersionIndex, 10)), true
		case strings.HasPrefix(name, MetadataPrefix):
			if v, ok := meta[name[len(MetadataPrefix):]]; ok {
				return v, true
			}
			return json.RawMessage("null"), true // a key this version lacks
		case name == VarAccessToken && c.token != "":
			return template.String(c.token), true
		case name == c.secretName && c.secretName != "":
			return template.String(c.secret), true
		}
		return nil, false
	}
}

// sampleEvent fills a payload's variables when it is checked or tested.
func sampleEvent(projectID string, at time.Time) storage.ArtifactEvent {
	return storage.ArtifactEvent{ID: "00000000-0000-0000-0000-000000000000", Type: "TEST", ProjectID: projectID,
		Collection: "collection", VersionIndex: 0, Digest: "digest", Author: "author",
		Metadata: json.RawMessage(`{}`), At: at}
}

// topLevelMetadata is an artifact's metadata: the top-level keys of its
// value, leaving out values above 16 KiB (payloads stay small); {} when
// the value is no object.
func topLevelMetadata(val json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(val, &obj); err != nil {
		return json.RawMessage(`{}`)
	}
	for k, v := range obj {
		if len(v) > maxMetadataValueBytes {
			delete(obj, k)
		}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return out
}
