package app

import (
	"context"
	"time"

	"github.com/weftdev/weft/storage"
)

// expireEvery is how often a store that must be told to drops calls past
// their project's retention (ClickHouse does it by itself with a TTL).
const expireEvery = 10 * time.Minute

// startRetention runs the store's expiry until ctx ends, when the store
// needs one (storage.CallExpirer), this process writes, and the config
// sets any retention.
func (s *Server) startRetention(ctx context.Context) {
	expirer, ok := s.store.(storage.CallExpirer)
	r := storage.Retention{Default: s.cfg.Retention.Default, Projects: s.cfg.Retention.Projects}
	if !ok || !s.roles.Process || !r.Enabled() {
		return
	}
	go func() {
		t := time.NewTicker(expireEvery)
		defer t.Stop()
		for {
			n, err := expirer.ExpireCalls(ctx, r, time.Now())
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
