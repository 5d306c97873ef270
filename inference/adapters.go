package inference

import (
	"context"
	"errors"
	"strings"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/storage"
)

// AdapterScheme starts a model that names a trained checkpoint:
// wandb-artifact:///<entity>/<project>/<name>:<alias>.
const AdapterScheme = "wandb-artifact:"

// Adapter is a checkpoint as the LoRA upstreams serve it.
type Adapter struct {
	// Name is the adapter's name upstream; BaseModel prices it.
	Name      string
	BaseModel string
}

// Adapters resolves a model naming a checkpoint for the caller. Errors
// wrap auth.ErrForbidden, storage.ErrNotFound or
// storage.ErrInvalidArgument; others are outages.
type Adapters interface {
	ResolveAdapter(ctx context.Context, p auth.Principal, model string) (Adapter, error)
}

// lookup finds a request's model: a catalog entry, or a checkpoint the
// LoRA upstreams serve.
func (g *Gateway) lookup(ctx context.Context, p auth.Principal, id string) (*catalog.Model, *apiError) {
	if g.adapters != nil && strings.HasPrefix(id, AdapterScheme) {
		return g.adapter(ctx, p, id)
	}
	model, ok := g.catalog.Lookup(id)
	switch {
	case !ok:
		return nil, modelNotFound(id)
	case model.Retired():
		return nil, modelRetired(id)
	}
	return model, nil
}

func (g *Gateway) adapter(ctx context.Context, p auth.Principal, id string) (*catalog.Model, *apiError) {
	a, err := g.adapters.ResolveAdapter(ctx, p, id)
	switch {
	case errors.Is(err, auth.ErrForbidden):
		// As for a project the key may not use: 401.
		return nil, authFailed("this API key may not use %s (%v)", id, err)
	case errors.Is(err, storage.ErrInvalidArgument):
		return nil, invalidRequest("model", "%v", err)
	case errors.Is(err, storage.ErrNotFound):
		e := modelNotFound(id)
		e.message += " (" + err.Error() + ")"
		return nil, e
	case err != nil:
		g.logger.Warn("inference: resolving a fine-tuned checkpoint failed (the store is unavailable); the request got 503 and the client retries; if it repeats, check the store", "model", id, "err", err)
		return nil, unavailable(g.cfg.RetryAfter, "checkpoints cannot be resolved right now; retry later")
	}
	m, ok := g.catalog.Adapter(id, a.Name, a.BaseModel)
	if !ok {
		e := modelNotFound(id)
		e.message = "no LoRA upstream is configured to serve checkpoints; list one under inference.lora.upstreams"
		return nil, e
	}
	return m, nil
}
