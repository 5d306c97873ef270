package app

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/weftdev/weft/storage"
)

// eventRecorder keeps the events it is given, or refuses them.
type eventRecorder struct {
	events []storage.ArtifactEvent
	err    error
}

func (r *eventRecorder) RecordEvents(_ context.Context, events []storage.ArtifactEvent) error {
	r.events = append(r.events, events...)
	return r.err
}

func TestAliasEventsPassOnAndTellTheGateway(t *testing.T) {
	next := &eventRecorder{}
	a := &aliasEvents{next: next}
	events := []storage.ArtifactEvent{
		{Type: storage.EventAddArtifactAlias, ProjectID: "acme/wandb-registry-models", Collection: "classifier", Aliases: []string{"production"}},
		{Type: storage.EventLinkArtifact, ProjectID: "acme/wandb-registry-models", Collection: "ranker"},
	}
	// Before the gateway exists, events still go on.
	if err := a.RecordEvents(context.Background(), events[:1]); err != nil || len(next.events) != 1 {
		t.Fatalf("err %v, %d events passed on", err, len(next.events))
	}
	var moved []string
	f := func(projectID, collection string) { moved = append(moved, projectID+"/"+collection) }
	a.moved.Store(&f)
	if err := a.RecordEvents(context.Background(), events); err != nil || len(next.events) != 3 {
		t.Fatalf("err %v, %d events passed on", err, len(next.events))
	}
	if len(moved) != 2 || moved[0] != "acme/wandb-registry-models/classifier" || moved[1] != "acme/wandb-registry-models/ranker" {
		t.Fatalf("the gateway was told %v", moved)
	}
	next.err = errors.New("outbox down")
	if err := a.RecordEvents(context.Background(), events[:1]); !errors.Is(err, next.err) {
		t.Fatalf("err %v, want the sink's error", err)
	}
}

// versionStore answers ReadObject with one version.
type versionStore struct {
	storage.ObjectStore
	val json.RawMessage
}

func (s versionStore) ReadObject(_ context.Context, req storage.ObjReadReq) (storage.ObjReadRes, error) {
	if req.Digest != "production" {
		return storage.ObjReadRes{}, storage.ErrNotFound
	}
	return storage.ObjReadRes{Obj: storage.ObjSchema{ProjectID: req.ProjectID, ObjectID: req.ObjectID, Digest: "d3", VersionIndex: 3, Val: s.val}}, nil
}

func TestRegistryAliasesResolve(t *testing.T) {
	cases := []struct {
		name, val, alias string
		want             string
		notFound         bool
	}{
		{"served_as names the model", `{"served_as":"clf-v3"}`, "production", "clf-v3", false},
		{"a version naming no model", `{"acc":0.9}`, "production", "", true},
		{"an alias pointing nowhere", `{"served_as":"clf-v3"}`, "canary", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := registryAliases{objects: versionStore{val: json.RawMessage(tc.val)}}
			got, err := r.ResolveAlias(context.Background(), "acme/wandb-registry-models", "classifier", tc.alias)
			if tc.notFound {
				if !errors.Is(err, storage.ErrNotFound) {
					t.Fatalf("err %v, want not found", err)
				}
				return
			}
			if err != nil || got.ServedAs != tc.want || got.Digest != "d3" || got.VersionIndex != 3 {
				t.Fatalf("ResolveAlias = %+v, %v", got, err)
			}
		})
	}
}
