package app

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/weftdev/weft/automations"
	"github.com/weftdev/weft/inference"
	"github.com/weftdev/weft/storage"
)

// registryAliases resolves the aliases catalog models follow: the
// version an alias points at, served under its checkpoint's adapter name
// or, for any other version, the string its value holds as served_as.
type registryAliases struct {
	objects  storage.ObjectStore
	training *trainingPart // nil: no checkpoints
}

func (r registryAliases) ResolveAlias(ctx context.Context, projectID, collection, alias string) (inference.AliasTarget, error) {
	res, err := r.objects.ReadObject(ctx, storage.ObjReadReq{ProjectID: projectID, ObjectID: collection, Digest: alias})
	if err != nil {
		return inference.AliasTarget{}, err
	}
	t := inference.AliasTarget{Digest: res.Obj.Digest, VersionIndex: res.Obj.VersionIndex}
	if r.training != nil {
		name, ok, err := r.training.svc.ServedName(ctx, projectID, res.Obj.Val)
		if err != nil {
			return t, fmt.Errorf("%s/%s:%s: %w", projectID, collection, alias, err)
		}
		if ok {
			t.ServedAs = name
			return t, nil
		}
	}
	var v struct {
		ServedAs string `json:"served_as"`
	}
	if json.Unmarshal(res.Obj.Val, &v) != nil || v.ServedAs == "" {
		return t, fmt.Errorf("%s/%s:%s (v%d) is no checkpoint and names no served_as model: %w",
			projectID, collection, alias, res.Obj.VersionIndex, storage.ErrNotFound)
	}
	t.ServedAs = v.ServedAs
	return t, nil
}

// aliasEvents passes artifact events on and tells the gateway of this
// process which collections' aliases moved, so models following them
// move at once; other processes learn at their next
// inference.alias_refresh.
type aliasEvents struct {
	next  automations.EventSink
	moved atomic.Pointer[func(projectID, collection string)]
}

func (a *aliasEvents) RecordEvents(ctx context.Context, events []storage.ArtifactEvent) error {
	err := a.next.RecordEvents(ctx, events)
	if f := a.moved.Load(); f != nil {
		for _, e := range events {
			(*f)(e.ProjectID, e.Collection)
		}
	}
	return err
}
