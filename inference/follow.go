package inference

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/storage"
)

// Aliases reads where a collection's aliases point, with the gateway's
// own authority: the operator chose the collection in the catalog, the
// caller only names the catalog model. Errors wrap storage.ErrNotFound
// when the alias points at no version; others are outages.
type Aliases interface {
	ResolveAlias(ctx context.Context, projectID, collection, alias string) (AliasTarget, error)
}

// AliasTarget is the version an alias points at.
type AliasTarget struct {
	Digest       string
	VersionIndex int64
	// ServedAs is the model name the upstreams serve the version under
	// (a LoRA adapter's name, say).
	ServedAs string
}

// aliasVersion is the version of a followed collection that answers a
// request: attributes.inference.artifact of its traced call.
type aliasVersion struct {
	Collection string
	Alias      string
	Version    int64 // version index: v<N>
	Digest     string
	ServedAs   string
}

func (v *aliasVersion) appendJSON(b []byte) []byte {
	b = appendJSONString(append(b, `{"collection":`...), v.Collection)
	b = appendJSONString(append(b, `,"alias":`...), v.Alias)
	b = append(strconv.AppendInt(append(b, `,"version":"v`...), v.Version, 10), '"')
	b = appendJSONString(append(b, `,"digest":`...), v.Digest)
	b = appendJSONString(append(b, `,"served_as":`...), v.ServedAs)
	return append(b, '}')
}

// followed is where one following model's aliases pointed at the last
// refresh. canary is nil while the canary alias points nowhere.
type followed struct {
	primary *aliasVersion
	canary  *aliasVersion
	weight  float64
}

// aliasTable is a snapshot of every following model's versions, by
// model id; refreshes replace it whole, so requests read it without a
// lock and never see half of one.
type aliasTable map[string]followed

// follower keeps the alias table current: a refresh on every nudge (an
// alias event) and every inference.alias_refresh as a backstop.
type follower struct {
	aliases Aliases
	models  []*catalog.Model // those with Routing.Follow
	every   time.Duration
	table   atomic.Pointer[aliasTable]
	nudge   chan struct{}
}

func newFollower(aliases Aliases, cat *catalog.Catalog, every time.Duration) *follower {
	f := &follower{aliases: aliases, models: cat.Following(), every: every, nudge: make(chan struct{}, 1)}
	f.table.Store(&aliasTable{})
	return f
}

// AliasMoved tells the gateway an alias of a collection moved, so that
// models following it move at once; it never blocks. The automations'
// alias events call it.
func (g *Gateway) AliasMoved(projectID, collection string) {
	f := g.follower
	if f == nil {
		return
	}
	for _, m := range f.models {
		if fl := m.Routing.Follow; fl.ProjectID() == projectID && fl.Name() == collection {
			select {
			case f.nudge <- struct{}{}:
			default: // a refresh is already due
			}
			return
		}
	}
}

// Run keeps the versions of followed aliases current until ctx ends.
// Without models that follow an alias it returns at once.
func (g *Gateway) Run(ctx context.Context) error {
	f := g.follower
	if f == nil || len(f.models) == 0 {
		return nil
	}
	t := time.NewTicker(f.every)
	defer t.Stop()
	for {
		g.refreshAliases(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-f.nudge:
		}
	}
}

// refreshAliases reads every followed alias and publishes the table. An
// alias that cannot be read right now keeps the version it had: an
// outage of the store must not take the model down.
func (g *Gateway) refreshAliases(ctx context.Context) {
	f := g.follower
	old := *f.table.Load()
	next := make(aliasTable, len(f.models))
	for _, m := range f.models {
		fl := m.Routing.Follow
		entry := followed{primary: old[m.ID].primary, canary: old[m.ID].canary}
		if v, ok := g.readAlias(ctx, fl, fl.Alias); ok {
			entry.primary = v
		}
		if c := fl.Canary; c != nil {
			entry.weight = c.Weight
			if v, ok := g.readAlias(ctx, fl, c.Alias); ok {
				entry.canary = v
			}
		}
		next[m.ID] = entry
	}
	f.table.Store(&next)
}

// readAlias reads one alias; ok is false on an outage (the old version
// stands). An alias pointing nowhere gives nil.
func (g *Gateway) readAlias(ctx context.Context, fl *catalog.Follow, alias string) (*aliasVersion, bool) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	t, err := g.follower.aliases.ResolveAlias(ctx, fl.ProjectID(), fl.Name(), alias)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil, true
	case err != nil:
		g.logger.Warn("inference: reading a followed alias failed; the version served before stays and it is read again within inference.alias_refresh; if it repeats, check the store", "collection", fl.Collection, "alias", alias, "err", err)
		return nil, false
	}
	return &aliasVersion{Collection: fl.Collection, Alias: alias, Version: t.VersionIndex, Digest: t.Digest, ServedAs: t.ServedAs}, true
}

// followAlias picks the version that answers a request for a model that
// follows an alias: the canary's for its share of requests, else the
// followed alias's. No store is read: the table is in memory.
func (g *Gateway) followAlias(ex *exchange, model *catalog.Model) *apiError {
	fl := model.Routing.Follow
	if fl == nil {
		return nil
	}
	var entry followed
	if f := g.follower; f != nil {
		entry = (*f.table.Load())[model.ID]
	}
	v := entry.primary
	if entry.canary != nil && (v == nil || rand.Float64() < entry.weight) {
		v = entry.canary
	}
	if v == nil {
		return unavailable(g.cfg.RetryAfter, "Model %q follows the alias %s of %s, which points at no version yet; please try again later",
			model.ID, fl.Alias, fl.Collection)
	}
	ex.version = *v
	return nil
}

// upstreamName is the model name up is sent: the catalog's, or for a
// model following an alias, the name of the version that answers.
func (g *Gateway) upstreamName(ex *exchange, up *catalog.Upstream) string {
	if ex.version.ServedAs != "" {
		return ex.version.ServedAs
	}
	return up.Model
}
