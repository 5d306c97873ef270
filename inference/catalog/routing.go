package catalog

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Balance policies: how each attempt's upstream is chosen among those the
// request has not tried yet.
const (
	// BalanceFailover takes the first in configuration order (the default).
	BalanceFailover = "failover"
	// BalanceWeighted draws one at random by weight.
	BalanceWeighted = "weighted"
	// BalanceLeastBusy takes the one with the fewest requests in flight,
	// the first in configuration order among equals.
	BalanceLeastBusy = "least_busy"
)

// MaxUpstreams bounds a model's upstreams: the gateway keeps the ones a
// request tried in a 64-bit set.
const MaxUpstreams = 64

// Routing is how a model's requests are spread and served, beyond its
// upstreams: balancing, the response cache and the registry alias the
// model follows (inference.models[i], inline).
type Routing struct {
	// Balance is failover (empty), weighted or least_busy.
	Balance string `yaml:"balance"`
	// Cache answers deterministic unstreamed requests (temperature 0 or
	// a seed) from the gateway's response cache.
	Cache bool `yaml:"cache"`
	// Follow serves the model with the version a registry alias points
	// at, instead of fixed upstream model names.
	Follow *Follow `yaml:"follow"`
}

// Follow names the alias a model follows: requests go to the model's
// upstreams under the name of the version the alias points at, and move
// when the alias moves.
type Follow struct {
	// Collection is <entity>/<project>/<collection>, e.g.
	// acme/wandb-registry-models/classifier.
	Collection string `yaml:"collection"`
	// Alias is the alias followed, e.g. production.
	Alias string `yaml:"alias"`
	// Canary sends a share of the requests to another alias's version.
	Canary *Canary `yaml:"canary"`
}

// Canary is the alias that takes Weight (between 0 and 1) of a followed
// model's requests while it points at a version.
type Canary struct {
	Alias  string  `yaml:"alias"`
	Weight float64 `yaml:"weight"`
}

// ProjectID is the project of the followed collection.
func (f *Follow) ProjectID() string {
	i := strings.LastIndexByte(f.Collection, '/')
	return f.Collection[:max(i, 0)]
}

// Name is the followed collection's name within its project.
func (f *Follow) Name() string {
	return f.Collection[strings.LastIndexByte(f.Collection, '/')+1:]
}

func (r Routing) validate(key string, upstreams []UpstreamConfig) []error {
	var errs []error
	switch r.Balance {
	case "", BalanceFailover, BalanceWeighted, BalanceLeastBusy:
	default:
		errs = append(errs, fmt.Errorf("%s.balance: %q is not one of failover, weighted, least_busy", key, r.Balance))
	}
	if len(upstreams) > MaxUpstreams {
		errs = append(errs, fmt.Errorf("%s.upstreams: %d listed; a model has at most %d", key, len(upstreams), MaxUpstreams))
	}
	for j, u := range upstreams {
		if u.Weight < 0 {
			errs = append(errs, fmt.Errorf("%s.upstreams[%d].weight: %d must not be negative (0 counts as 1)", key, j, u.Weight))
		}
	}
	if r.Follow != nil {
		errs = append(errs, r.Follow.validate(key+".follow")...)
	}
	return errs
}

func (f *Follow) validate(key string) []error {
	var errs []error
	if parts := strings.Split(f.Collection, "/"); len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		errs = append(errs, fmt.Errorf("%s.collection: %q must be <entity>/<project>/<collection>, e.g. acme/wandb-registry-models/classifier", key, f.Collection))
	}
	if err := checkAlias(f.Alias); err != nil {
		errs = append(errs, fmt.Errorf("%s.alias: %w", key, err))
	}
	if c := f.Canary; c != nil {
		if err := checkAlias(c.Alias); err != nil {
			errs = append(errs, fmt.Errorf("%s.canary.alias: %w", key, err))
		} else if c.Alias == f.Alias {
			errs = append(errs, fmt.Errorf("%s.canary.alias: %q is the followed alias; name another, e.g. canary", key, c.Alias))
		}
		if !(c.Weight > 0 && c.Weight < 1) || math.IsNaN(c.Weight) {
			errs = append(errs, fmt.Errorf("%s.canary.weight: %v must be between 0 and 1 (the share of requests), e.g. 0.2", key, c.Weight))
		}
	}
	return errs
}

// checkAlias is the part of the alias rule a configuration can break.
func checkAlias(a string) error {
	if strings.TrimSpace(a) == "" || strings.ContainsAny(a, "/:") {
		return fmt.Errorf("%q must be an alias name such as production, without '/' or ':'", a)
	}
	return nil
}

// indexUpstreams numbers the distinct provider and model pairs, so that
// two models served by the same upstream share its state (in flight,
// circuit breaker). LoRA upstreams are numbered too; the adapters they
// serve share their server's number.
func (c *Catalog) indexUpstreams() {
	seen := map[[2]string]int{}
	number := func(u *Upstream) {
		k := [2]string{u.Provider.Name, u.Model}
		i, ok := seen[k]
		if !ok {
			i = len(c.upstreams)
			seen[k] = i
		}
		if u.Index = i; !ok {
			c.upstreams = append(c.upstreams, *u)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(c.models)) {
		m := c.models[id]
		for j := range m.Upstreams {
			number(&m.Upstreams[j])
		}
	}
	for j := range c.lora {
		number(&c.lora[j])
	}
}

// Upstreams are the catalog's distinct upstreams, by Index.
func (c *Catalog) Upstreams() []Upstream { return c.upstreams }

// Following are the models that follow an alias, in id order.
func (c *Catalog) Following() []*Model {
	var out []*Model
	for _, id := range slices.Sorted(maps.Keys(c.models)) {
		if m := c.models[id]; m.Routing.Follow != nil && !m.Retired() {
			out = append(out, m)
		}
	}
	return out
}
