package inference

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/weftdev/weft/storage"
)

// initLimits sets up the rate limits and budgets: the configuration
// file's until the store holds the admin API's.
func (g *Gateway) initLimits(o Options) {
	g.rates = newRateLimiter(LimitSet{Limits: o.Config.Limits, Budgets: o.Config.Budgets})
	g.spendCaps = newSpendCaps(o.Spend)
	g.limitStore, g.replica = o.Limits, o.Replica
	if g.replica == "" {
		g.replica = newID()
	}
}

// admitRate counts the request against its key's and project's rate
// limits. A refused request is not traced: it is shed load.
func (g *Gateway) admitRate(ex *exchange, fields map[string]json.RawMessage) *apiError {
	a, e := g.rates.admit(g.now(), ex.project, ex.principal.KeyID, estimateTokens(fields))
	ex.rate = a
	if e != nil {
		ex.untraced = true
	}
	return e
}

// rateAndSlots admits a request (fields: its chat request, nil for one
// without messages) under the rate limits and takes its concurrency
// slots; a request the slots refuse is taken back from the limits.
func (g *Gateway) rateAndSlots(ex *exchange, fields map[string]json.RawMessage) (func(), *apiError) {
	if e := g.admitRate(ex, fields); e != nil {
		return nil, e
	}
	release, e := g.slots(ex)
	if e != nil {
		ex.rate.undo()
	}
	return release, e
}

// settleRate corrects the tokens counted for ex with its recorded usage.
func (g *Gateway) settleRate(ex *exchange) {
	if ex.rate.hasTok {
		ex.rate.settle(usedTokens(ex.usage))
	}
}

// Loops are the gateway's background work, to run until shutdown:
// sharing rate counts and the admin API's limits with the other
// replicas, and measuring the budgets' spend.
func (g *Gateway) Loops() []func(context.Context) error {
	return []func(context.Context) error{
		func(ctx context.Context) error {
			return g.every(ctx, g.cfg.LimitsSyncInterval, "sharing rate limits", g.SyncLimits)
		},
		func(ctx context.Context) error {
			return g.every(ctx, g.cfg.BudgetsInterval, "measuring budgets", g.MeasureBudgets)
		},
	}
}

func (g *Gateway) every(ctx context.Context, interval time.Duration, what string, round func(context.Context) error) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := round(ctx); err != nil && ctx.Err() == nil {
			g.logger.Warn("inference: "+what+" failed; the values held stay in force and it is retried next interval (inference.limits_sync_interval, inference.budgets_interval); if it repeats, check the store", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// MeasureBudgets reads the budgets' spend from the recorded calls.
func (g *Gateway) MeasureBudgets(ctx context.Context) error {
	return g.spendCaps.refresh(ctx, g.rates.limits.Load().set.Budgets, g.now())
}

// SyncLimits is one round of sharing with the other replicas: it follows
// the limits the admin API stored, publishes this replica's counts of
// the current window (and the last, which may have changed since) and
// reads the others' sums. Between rounds each replica counts alone, so
// the limits hold within (replicas-1) × rate × interval.
func (g *Gateway) SyncLimits(ctx context.Context) error {
	if g.limitStore == nil {
		return nil
	}
	err := g.followStoredLimits(ctx)
	now := g.now()
	w := windowOf(now)
	var counts []storage.RateCount
	for _, c := range g.rates.all() {
		if cw, u, changed := c.snapshot(); changed && cw >= w-1 {
			counts = append(counts, storage.RateCount{Scope: c.scope, Window: windowStart(cw), Replica: g.replica,
				Requests: u.requests, Tokens: u.tokens})
		}
	}
	if perr := g.limitStore.PublishRateCounts(ctx, counts); perr != nil {
		return errors.Join(err, fmt.Errorf("publish rate counts: %w", perr))
	}
	others, rerr := g.limitStore.RateCounts(ctx, windowStart(w-1), g.replica, storage.MaxRateCounts)
	if rerr != nil {
		return errors.Join(err, fmt.Errorf("read rate counts: %w", rerr))
	}
	g.rates.applyOthers(others, w)
	return err
}

// followStoredLimits puts the admin API's limits in force, or the
// configuration file's once they are reset.
func (g *Gateway) followStoredLimits(ctx context.Context) error {
	stored, err := g.limitStore.InferenceLimits(ctx)
	cur := g.rates.limits.Load()
	switch {
	case errors.Is(err, storage.ErrNotFound):
		if cur.source != "config" {
			g.applyLimits(LimitSet{Limits: g.cfg.Limits, Budgets: g.cfg.Budgets}, "config", time.Time{}, "")
		}
		return nil
	case err != nil:
		return fmt.Errorf("read the stored limits: %w", err)
	case cur.source == "store" && cur.updatedAt.Equal(stored.UpdatedAt):
		return nil
	}
	set, err := parseLimitSet(stored.Doc)
	if err != nil {
		return fmt.Errorf("the stored limits no longer parse; keeping those in force: %w", err)
	}
	g.applyLimits(set, "store", stored.UpdatedAt, stored.UpdatedBy)
	return nil
}

// applyLimits puts a limit set in force at once; counts carry over.
func (g *Gateway) applyLimits(set LimitSet, source string, at time.Time, by string) {
	g.rates.limits.Store(compileLimits(set, source, at, by))
	g.logger.Info("inference: limits in force", "source", source, "limits", len(set.Limits), "budgets", len(set.Budgets))
}

// parseLimitSet reads a limit set strictly and validates it; errors
// name the field.
func parseLimitSet(raw []byte) (LimitSet, error) {
	var set LimitSet
	if err := decodeStrict(raw, &set); err != nil {
		return set, err
	}
	return set, errors.Join(set.validate("")...)
}

// all lists the counters.
func (r *rateLimiter) all() []*windowCounter {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*windowCounter, 0, len(r.projects)+len(r.keys))
	for _, c := range r.projects {
		out = append(out, c)
	}
	for _, c := range r.keys {
		out = append(out, c)
	}
	return out
}

// applyOthers records the other replicas' sums (sorted by scope and
// window) for window w: each counter takes its scope's latest window.
// Scopes this replica has not counted yet get a counter when a limit
// applies, so its first request here already sees the others' counts.
// Counters idle since before w are dropped.
func (r *rateLimiter) applyOthers(others []storage.RateCount, w int64) {
	latest := map[string]storage.RateCount{}
	for _, c := range others {
		latest[c.Scope] = c // sorted by window: the last one stays
	}
	lim := r.limits.Load()
	scopes := make([]string, 0, len(latest))
	for s := range latest {
		scopes = append(scopes, s)
	}
	sort.Strings(scopes)
	for _, s := range scopes {
		isKey, name := false, ""
		switch {
		case len(s) > len(projectScope) && s[:len(projectScope)] == projectScope:
			name = s[len(projectScope):]
		case len(s) > len(keyScope) && s[:len(keyScope)] == keyScope:
			isKey, name = true, s[len(keyScope):]
		default:
			continue
		}
		if _, ok := lim.rule(isKey, name); ok {
			r.counter(isKey, name)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range []map[string]*windowCounter{r.projects, r.keys} {
		for name, c := range m {
			if o, ok := latest[c.scope]; ok {
				c.setOthers(windowOf(o.Window), usage{requests: o.Requests, tokens: o.Tokens})
			} else {
				c.setOthers(w, usage{})
			}
			if c.retireIfIdle(w) {
				delete(m, name)
			}
		}
	}
}
