package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/internal/lifecycle"
	"github.com/weftdev/weft/storage"
)

// expireEvery is how often a store that must be told to drops calls past
// their project's retention (ClickHouse does it by itself with a TTL).
const expireEvery = 10 * time.Minute

// retentionRefresh bounds how stale the retention changes a process holds
// may be: another process (a query role) may have made one.
const retentionRefresh = time.Minute

// retentionSource is the retention every part of the process applies:
// the configured one and the changes made through /project/ttl_settings,
// read from the store. Writes stamp (ClickHouse) and the expirer applies
// (DuckDB) what For answers, reads report it as expire_at.
type retentionSource struct {
	logger *slog.Logger
	mu     sync.RWMutex
	r      storage.Retention
	store  storage.RetentionStore // nil until the store is open
	loaded time.Time
}

func newRetentionSource(cfg config.Retention, logger *slog.Logger) *retentionSource {
	return &retentionSource{logger: logger, r: storage.Retention{Default: cfg.Default, Projects: cfg.Projects}}
}

// attach reads the store's changes, and from then on refreshes them.
func (s *retentionSource) attach(ctx context.Context, store storage.RetentionStore) error {
	s.mu.Lock()
	s.store = store
	s.mu.Unlock()
	return s.Reload(ctx)
}

// Reload reads the changes from the store now.
func (s *retentionSource) Reload(ctx context.Context) error {
	s.mu.RLock()
	store := s.store
	s.mu.RUnlock()
	if store == nil {
		return nil
	}
	changes, err := store.RetentionChanges(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.r, s.loaded = s.r.WithChanges(changes), time.Now()
	s.mu.Unlock()
	return nil
}

// fresh reloads the changes when they are older than retentionRefresh;
// a failed reload keeps the ones held and is logged.
func (s *retentionSource) fresh() {
	s.mu.RLock()
	stale := s.store != nil && time.Since(s.loaded) > retentionRefresh
	s.mu.RUnlock()
	if !stale {
		return
	}
	s.mu.Lock()
	// One caller reloads; the others go on with what is held.
	if time.Since(s.loaded) <= retentionRefresh {
		s.mu.Unlock()
		return
	}
	s.loaded = time.Now()
	s.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Reload(ctx); err != nil {
			s.logger.Warn("reading retention changes failed; keeping the ones held until the next read; if it repeats, check the store", "err", err)
		}
	}()
}

// For is how long a call of project that started at start is kept.
func (s *retentionSource) For(project string, start time.Time) time.Duration {
	s.fresh()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.r.For(project, start)
}

// Current is the retention of a call of project starting now.
func (s *retentionSource) Current(project string) time.Duration {
	s.fresh()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.r.Current(project)
}

// Snapshot is the whole retention as held now.
func (s *retentionSource) Snapshot() storage.Retention {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.r
}

// retentionPart is the store's expiry as a part of the process, when the
// store needs one (storage.CallExpirer) and this process writes; nil
// otherwise. Each run reads the retention changes first, so a project
// whose retention is set through the API expires without a restart.
func (s *Server) retentionPart() component.Component {
	expirer, ok := s.store.(storage.CallExpirer)
	if !ok || !s.roles.Process {
		return nil
	}
	return lifecycle.NewLoop("retention", s.logger, func(ctx context.Context) error {
		// A round's store work is not cut off part way; shutdown ends
		// the loop between rounds.
		store := context.WithoutCancel(ctx)
		t := time.NewTicker(expireEvery)
		defer t.Stop()
		for {
			if err := s.retention.Reload(store); err != nil {
				s.logger.Warn("reading retention changes failed; the ones held apply until the next round; if it repeats, check the store", "err", err)
			}
			if r := s.retention.Snapshot(); r.Enabled() {
				n, err := expirer.ExpireCalls(store, r, time.Now())
				switch {
				case err != nil:
					s.logger.Warn("expiring calls past their retention failed; retried next round; if it repeats, check the store (disk space, ClickHouse)", "err", err)
				case n > 0:
					s.logger.Info("expired calls past their retention", "calls", n)
				}
			}
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
		}
	})
}
