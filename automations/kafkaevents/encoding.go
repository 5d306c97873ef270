// Package kafkaevents carries artifact events over Kafka in the
// scale-out deployment: the API roles produce each event (acks=all)
// before they answer the write that caused it, and the process role
// consumes them into deliveries in the shared store, committing offsets
// only once the deliveries are stored. Records are versioned JSON keyed
// by project, so one project's events stay in order on one partition.
//
// It must never import the HTTP API, receivers, the query API or a
// storage backend.
package kafkaevents

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/weftdev/weft/storage"
)

// recordVersion is the format of event records; a consumer refuses
// versions it does not know rather than guess.
const recordVersion = 1

// record is an event on the wire.
type record struct {
	V            int             `json:"v"`
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	ProjectID    string          `json:"project_id"`
	Collection   string          `json:"collection"`
	VersionIndex int64           `json:"version_index"`
	Digest       string          `json:"digest"`
	Aliases      []string        `json:"aliases"`
	Source       string          `json:"source,omitempty"`
	Author       string          `json:"author"`
	Metadata     json.RawMessage `json:"metadata"`
	At           time.Time       `json:"at"`
}

// Encode is an event's record value.
func Encode(e storage.ArtifactEvent) ([]byte, error) {
	meta := e.Metadata
	if len(meta) == 0 {
		meta = json.RawMessage(`{}`)
	}
	return json.Marshal(record{V: recordVersion, ID: e.ID, Type: e.Type, ProjectID: e.ProjectID, Collection: e.Collection,
		VersionIndex: e.VersionIndex, Digest: e.Digest, Aliases: e.Aliases, Source: e.Source, Author: e.Author,
		Metadata: meta, At: e.At.UTC()})
}

// Decode reads a record value back.
func Decode(value []byte) (storage.ArtifactEvent, error) {
	var r record
	if err := json.Unmarshal(value, &r); err != nil {
		return storage.ArtifactEvent{}, fmt.Errorf("event record: %w", err)
	}
	if r.V != recordVersion {
		return storage.ArtifactEvent{}, fmt.Errorf("event record version %d: this weft reads version %d; upgrade it", r.V, recordVersion)
	}
	if r.ID == "" || r.ProjectID == "" || r.Type == "" {
		return storage.ArtifactEvent{}, fmt.Errorf("event record lacks id, project_id or type")
	}
	if r.Aliases == nil {
		r.Aliases = []string{}
	}
	return storage.ArtifactEvent{ID: r.ID, Type: r.Type, ProjectID: r.ProjectID, Collection: r.Collection,
		VersionIndex: r.VersionIndex, Digest: r.Digest, Aliases: r.Aliases, Source: r.Source, Author: r.Author,
		Metadata: r.Metadata, At: r.At.UTC()}, nil
}
