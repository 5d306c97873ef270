package automations

import (
	"context"
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// LinkRequest links a version of a project's collection into a registry
// collection, optionally with aliases.
type LinkRequest struct {
	ProjectID, Collection, Version string
	Registry, TargetCollection     string
	Aliases                        []string
}

// LinkResult is the linked version in the registry.
type LinkResult struct {
	ProjectID, Collection, Digest string
	VersionIndex                  int64
}

// RegistryProject is the project id of an entity's registry: a registry
// is a project named wandb-registry-<name>. A name that already carries
// the prefix is taken as it is.
func RegistryProject(entity, registry string) string {
	if strings.HasPrefix(registry, RegistryPrefix) {
		return entity + "/" + registry
	}
	return entity + "/" + RegistryPrefix + registry
}

// LinkTarget checks a link's registry fields and returns the registry's
// project id, for the caller to authorise before Link.
func LinkTarget(req LinkRequest) (string, error) {
	entity, _, _ := strings.Cut(req.ProjectID, "/")
	name := strings.TrimPrefix(req.Registry, RegistryPrefix)
	if strings.TrimSpace(name) == "" || strings.ContainsAny(name, "/:") {
		return "", invalid("registry", "%q: name the registry (e.g. models), without '/' or ':'", req.Registry)
	}
	return RegistryProject(entity, req.Registry), nil
}

// Link stores the source version's value as a version of the registry
// collection (its version index counts from v0 there; latest moves to
// it), points the aliases at it, and records LINK_ARTIFACT and one
// ADD_ARTIFACT_ALIAS per alias before returning.
func (s *Service) Link(ctx context.Context, req LinkRequest) (LinkResult, error) {
	target, err := LinkTarget(req)
	if err != nil {
		return LinkResult{}, err
	}
	if req.TargetCollection == "" {
		req.TargetCollection = req.Collection
	}
	if err := checkCollection("target_collection", req.TargetCollection, false); err != nil {
		return LinkResult{}, err
	}
	if err := storekit.ValidateLabels(req.Aliases, storage.ValidateAliasName); err != nil {
		return LinkResult{}, err
	}
	src, err := s.d.Objects.ReadObject(ctx, storage.ObjReadReq{ProjectID: req.ProjectID, ObjectID: req.Collection, Digest: req.Version})
	if err != nil {
		return LinkResult{}, err
	}
	who := author(ctx)
	linked, err := s.storeLinked(ctx, target, req, src.Obj.Val, who)
	if err != nil {
		return LinkResult{}, err
	}
	aliases := storekit.DistinctSorted(req.Aliases)
	link := newEvent(storage.EventLinkArtifact, linked, aliases, who, s.d.Now())
	link.Source = fmt.Sprintf("weave:///%s/object/%s:%s", req.ProjectID, req.Collection, src.Obj.Digest)
	events := append([]storage.ArtifactEvent{link}, aliasEvents(linked, aliases, who, s.d.Now())...)
	if err := s.d.Events.RecordEvents(ctx, events); err != nil {
		return LinkResult{}, eventsNotRecorded(err)
	}
	return LinkResult{ProjectID: target, Collection: req.TargetCollection, Digest: linked.Digest, VersionIndex: linked.VersionIndex}, nil
}

// storeLinked writes the registry's version of val and its aliases and
// reads it back.
func (s *Service) storeLinked(ctx context.Context, target string, req LinkRequest, val []byte, who string) (storage.ObjSchema, error) {
	obj := storage.ObjSchemaForInsert{ProjectID: target, ObjectID: req.TargetCollection, Val: val}
	if who != "" {
		obj.WBUserID = &who
	}
	created, err := s.d.Objects.CreateObject(ctx, storage.ObjCreateReq{Obj: obj})
	if err != nil {
		return storage.ObjSchema{}, err
	}
	if len(req.Aliases) > 0 {
		err := s.d.Objects.SetObjectAliases(ctx, storage.ObjAliasesReq{ProjectID: target, ObjectID: req.TargetCollection,
			Digest: created.Digest, Aliases: storekit.DistinctSorted(req.Aliases)})
		if err != nil {
			return storage.ObjSchema{}, err
		}
	}
	linked, err := s.d.Objects.ReadObject(ctx, storage.ObjReadReq{ProjectID: target, ObjectID: req.TargetCollection, Digest: created.Digest})
	return linked.Obj, err
}
