package automations

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// EventSink makes artifact events durable: the request that caused them
// is answered only after RecordEvents returns, so an acknowledged change
// always reaches its automations, even across a crash. The embedded
// store's outbox and the Kafka producer implement it.
type EventSink interface {
	RecordEvents(ctx context.Context, events []storage.ArtifactEvent) error
}

// Objects is the object store with alias events: every alias set through
// it, by any route, records ADD_ARTIFACT_ALIAS for each alias once the
// change is stored and before it is acknowledged.
//
// Every request records its events, even one that sets an alias where it
// already points. A crash after the change but before its events leaves
// the request unanswered; the client's retry stores the same change again
// and records the events then. Receivers may see an event twice
// (at-least-once) but never miss an acknowledged one.
type Objects struct {
	storage.ObjectStore
	sink EventSink
	now  func() time.Time
}

// NewObjects wraps store.
func NewObjects(store storage.ObjectStore, sink EventSink, now func() time.Time) *Objects {
	return &Objects{ObjectStore: store, sink: sink, now: now}
}

// SetObjectAliases implements storage.ObjectStore: it resolves the
// version first, so the aliases and the events name the same version.
func (o *Objects) SetObjectAliases(ctx context.Context, req storage.ObjAliasesReq) error {
	if err := storekit.ValidateLabels(req.Aliases, storage.ValidateAliasName); err != nil {
		return err
	}
	ver, err := o.ObjectStore.ReadObject(ctx, storage.ObjReadReq{ProjectID: req.ProjectID, ObjectID: req.ObjectID, Digest: req.Digest})
	if err != nil {
		return err
	}
	req.Digest = ver.Obj.Digest
	if err := o.ObjectStore.SetObjectAliases(ctx, req); err != nil {
		return err
	}
	return o.record(ctx, aliasEvents(ver.Obj, storekit.DistinctSorted(req.Aliases), author(ctx), o.now()))
}

func (o *Objects) record(ctx context.Context, events []storage.ArtifactEvent) error {
	if err := o.sink.RecordEvents(ctx, events); err != nil {
		return eventsNotRecorded(err)
	}
	return nil
}

// eventsNotRecorded is a 503: the change is stored but its events are
// not, and the client's retry (which repeats the change harmlessly)
// records them.
func eventsNotRecorded(err error) error {
	return fmt.Errorf("recording artifact events (the change is stored; retry the request): %w: %w", storage.ErrUnavailable, err)
}

// author is the user behind a request, "" outside one.
func author(ctx context.Context) string {
	p, _ := httpapi.PrincipalFrom(ctx)
	return p.UserID
}

// newEvent describes a change to version v. Event ids are time-ordered
// (UUIDv7) so receivers can sort by them.
func newEvent(typ string, v storage.ObjSchema, aliases []string, who string, at time.Time) storage.ArtifactEvent {
	id, err := uuid.NewV7()
	if err != nil {
		id = uuid.New()
	}
	return storage.ArtifactEvent{ID: id.String(), Type: typ, ProjectID: v.ProjectID, Collection: v.ObjectID,
		VersionIndex: v.VersionIndex, Digest: v.Digest, Aliases: aliases, Author: who,
		Metadata: topLevelMetadata(v.Val), At: at.UTC().Truncate(time.Microsecond)}
}

// aliasEvents is one ADD_ARTIFACT_ALIAS per alias set on v.
func aliasEvents(v storage.ObjSchema, aliases []string, who string, at time.Time) []storage.ArtifactEvent {
	out := make([]storage.ArtifactEvent, 0, len(aliases))
	for _, a := range aliases {
		out = append(out, newEvent(storage.EventAddArtifactAlias, v, []string{a}, who, at))
	}
	return out
}
