package traceapi

import (
	"context"
	"fmt"

	"github.com/weftdev/weft/storage"
)

// v2Kind is one family of the v2 object API and how it maps onto object
// versions: ops are versions of kind op; every other family is the object
// versions whose base_object_class is its class, as the SDKs publish a
// weave.Dataset, Scorer, Evaluation or Model (or a subclass of one).
type v2Kind struct {
	path  string // the path segment: "ops", "datasets", ...
	what  string // the family's name in messages
	class string // base_object_class; empty for ops
	// create decodes a create body and publishes the object.
	create func(ctx context.Context, pub publisher, body []byte) (any, error)
	// view is the read and list answer for one stored version.
	view func(ctx context.Context, src sourceReader, o storage.ObjSchema) (any, error)
	// newestFirst lists versions by object_id, newest version first, as
	// the reference lists ops; other kinds list in creation order.
	newestFirst bool
}

// v2Kinds are the families served, in registration order.
var v2Kinds = []v2Kind{
	{path: "ops", what: "Op", create: createOpV2, view: viewOp, newestFirst: true},
	{path: "datasets", what: "Dataset", class: "Dataset", create: createDataset, view: viewDataset},
	{path: "scorers", what: "Scorer", class: "Scorer", create: createScorer, view: viewScorer},
	{path: "evaluations", what: "Evaluation", class: "Evaluation", create: createEvaluation, view: viewEvaluation},
	{path: "models", what: "Model", class: "Model", create: createModel, view: viewModel},
}

// holds reports whether a stored version belongs to the family.
func (k v2Kind) holds(o storage.ObjSchema) bool {
	if k.class == "" {
		return o.Kind == storage.KindOp
	}
	return o.Kind == storage.KindObject && o.BaseObjectClass != nil && *o.BaseObjectClass == k.class
}

// filter selects the family's versions in an object query.
func (k v2Kind) filter() *storage.ObjectVersionFilter {
	if k.class == "" {
		return &storage.ObjectVersionFilter{IsOp: new(true)}
	}
	return &storage.ObjectVersionFilter{BaseObjectClasses: []string{k.class}, IsOp: new(false)}
}

// sortBy is the order the family lists in; nil is the store's (creation
// order).
func (k v2Kind) sortBy() []storage.SortBy {
	if !k.newestFirst {
		return nil
	}
	return []storage.SortBy{{Field: "object_id", Direction: "asc"}, {Field: "created_at", Direction: "desc"}}
}

// notFound is the 404 of a version the family does not have.
func (k v2Kind) notFound(objectID, digest string) error {
	return fmt.Errorf("%s %s:%s not found: %w", k.what, objectID, digest, storage.ErrNotFound)
}
