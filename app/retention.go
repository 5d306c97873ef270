package app

import (
	"context"
	"time"

	"github.com/weftdev/weft/storage/duckdb"
)

// expireEvery is how often the embedded store drops calls past their
// project's retention (ClickHouse does the same with a TTL).
const expireEvery = 10 * time.Minute

// startRetention runs the embedded store's expiry until ctx ends, when the
// config sets any retention.
func (s *Server) startRetention(ctx context.Context) {
	store, ok := s.store.(*duckdb.Store)
	r := duckdb.Retention{Default: s.cfg.Retention.Default, Projects: s.cfg.Retention.Projects}
	if !ok || !s.roles.Process || (r.Default == 0 && len(r.Projects) == 0) {
		return
	}
	go func() {
		t := time.NewTicker(expireEvery)
		defer t.Stop()
		for {
			n, err := store.ExpireCalls(ctx, r, time.Now())
			switch {
			case err != nil && ctx.Err() == nil:
				s.logger.Warn("expiring calls past their retention", "err", err)
			case n > 0:
				s.logger.Info("expired calls past their retention", "calls", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}
