package tracemetricsprocessor

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftdev/weft/pricing"
)

// PriceSource reads a project's own prices (storage.CostStore has it).
type PriceSource interface {
	AllProjectPrices(ctx context.Context, projectID string) ([]pricing.Price, error)
}

// Price cache timing: a project's prices are read again after
// priceTTL, and one read may take priceReadTimeout.
const (
	priceTTL         = time.Minute
	priceReadTimeout = 10 * time.Second
)

// priceCache prices usage at a project's own prices and the default
// table. Project prices are read from the store in the background: the
// pipeline never waits for the store, so until a project's prices are
// first read (milliseconds after its first call) its calls are priced at
// the defaults, and a price change takes up to priceTTL to show. It
// holds at most max projects; past that one is forgotten at random.
type priceCache struct {
	defaults atomic.Pointer[pricing.Table]
	source   PriceSource // nil: defaults only
	logger   *slog.Logger
	max      int

	mu       sync.Mutex
	projects map[string]*projectPrices
	// queued are projects sent to the reader and not yet read.
	queued map[string]bool
	reads  chan string
}

type projectPrices struct {
	byLLM map[string][]pricing.Price
	read  time.Time
}

func newPriceCache(source PriceSource, defaults *pricing.Table, max int, logger *slog.Logger) *priceCache {
	c := &priceCache{source: source, logger: logger, max: max,
		projects: map[string]*projectPrices{}, queued: map[string]bool{}, reads: make(chan string, 256)}
	c.defaults.Store(defaults)
	return c
}

// best is the price of llmID for a call of project started at. A missing
// or stale project is queued for a read; until then the prices in hand
// (or the defaults alone) apply.
func (c *priceCache) best(project, llmID string, at, now time.Time) (pricing.Price, bool) {
	var own []pricing.Price
	if c.source != nil {
		c.mu.Lock()
		p := c.projects[project]
		if (p == nil || now.Sub(p.read) > priceTTL) && !c.queued[project] {
			select {
			case c.reads <- project:
				c.queued[project] = true
			default: // the reader is behind; a later call asks again
			}
		}
		if p != nil {
			own = p.byLLM[llmID]
		}
		c.mu.Unlock()
	}
	var defaults []pricing.Price
	if t := c.defaults.Load(); t != nil {
		defaults = t.Rows(llmID)
	}
	po, okOwn := pricing.Best(llmID, at, own)
	pd, okDefault := pricing.Best(llmID, at, defaults)
	switch {
	case okOwn && okDefault:
		return pricing.Best(llmID, at, []pricing.Price{po, pd})
	case okOwn:
		return po, true
	}
	return pd, okDefault
}

// run reads queued projects' prices until ctx ends.
func (c *priceCache) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case project := <-c.reads:
			c.read(ctx, project)
		}
	}
}

func (c *priceCache) read(ctx context.Context, project string) {
	rctx, cancel := context.WithTimeout(ctx, priceReadTimeout)
	rows, err := c.source.AllProjectPrices(rctx, project)
	cancel()
	p := &projectPrices{byLLM: map[string][]pricing.Price{}, read: time.Now()}
	if err != nil {
		c.logger.Warn("trace metrics: reading project prices failed; costs are priced at the defaults until the next read; if it repeats, check the store", "project", project, "err", err)
	}
	for _, r := range rows {
		p.byLLM[r.LLMID] = append(p.byLLM[r.LLMID], r)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.queued, project)
	if old, ok := c.projects[project]; ok && err != nil {
		old.read = p.read // keep what was read before; ask again after the TTL
		return
	}
	if _, ok := c.projects[project]; !ok && len(c.projects) >= c.max {
		for k := range c.projects { // forget one at random
			delete(c.projects, k)
			break
		}
	}
	c.projects[project] = p
}

// usd reports whether a price is in US dollars (weft's tables are; a
// project price in another unit is left out of the cost metric).
func usd(p pricing.Price) bool {
	return (p.PromptTokenCostUnit == "" || strings.EqualFold(p.PromptTokenCostUnit, pricing.UnitUSD)) &&
		(p.CompletionTokenCostUnit == "" || strings.EqualFold(p.CompletionTokenCostUnit, pricing.UnitUSD))
}
