package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/clickhouse"
	"github.com/weftdev/weft/storage/duckdb"
)

// backend is everything the API needs from storage. The embedded DuckDB
// store and the ClickHouse store both provide all of it; the conformance
// suites keep them answering alike.
type backend interface {
	storage.TraceData
	storage.ControlPlane
	Close() error
}

var (
	_ backend = (*duckdb.Store)(nil)
	_ backend = (*clickhouse.Store)(nil)
)

// openBackend opens the configured store and the key store that goes with
// it: keys live beside the data (a file for DuckDB, a table in ClickHouse)
// so every role of a deployment sees the same keys.
func openBackend(ctx context.Context, cfg config.Config, logger *slog.Logger, o options) (backend, auth.KeyStore, error) {
	if cfg.ClickHouseDSN == "" {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("data_dir %s: %w", cfg.DataDir, err)
		}
		store, err := duckdb.OpenWithOptions(ctx, cfg.DataDir, duckdb.Options{
			MemoryMB: cfg.DuckDBMemoryMB, Threads: cfg.DuckDBThreads,
			// The storage exporter's log holds every call write until the
			// store reports it checkpointed, so DuckDB need not log it too.
			CallsUnlogged: cfg.WALConfig().Enabled,
			IndexBytes:    o.reserveIndex(),
		}, logger)
		if err != nil {
			return nil, nil, err
		}
		return store, auth.NewFileStore(cfg.DataDir), nil
	}
	store, err := openClickHouse(ctx, cfg, logger, o.retention.For)
	if err != nil {
		return nil, nil, err
	}
	return store, store, nil
}

// reserveIndex is what the embedded store tells the size of its call
// keys to: the heap limit, when New was given one.
func (o options) reserveIndex() func(int64) {
	if o.memory == nil {
		return nil
	}
	return o.memory.Reserve
}

// OpenClickHouse opens the configured ClickHouse store, applying
// migrations when migrate_on_start is set. `weft keys` and `weft migrate`
// use it too.
func OpenClickHouse(ctx context.Context, cfg config.Config, logger *slog.Logger) (*clickhouse.Store, error) {
	return openClickHouse(ctx, cfg, logger, newRetentionSource(cfg.Retention, logger).For)
}

// openClickHouse is OpenClickHouse stamping calls' expiry with retention.
func openClickHouse(ctx context.Context, cfg config.Config, logger *slog.Logger, retention func(string, time.Time) time.Duration) (*clickhouse.Store, error) {
	store, err := clickhouse.Open(ctx, cfg.ClickHouseDSN, clickhouse.Options{Retention: retention}, logger)
	if err != nil {
		return nil, fmt.Errorf("clickhouse_dsn: %w", err)
	}
	if cfg.MigrateOnStart {
		if err := store.Migrate(ctx); err != nil {
			return nil, errors.Join(fmt.Errorf("clickhouse migrations: %w", err), store.Close())
		}
	}
	return store, nil
}

// backendName labels the store in metrics.
func backendName(cfg config.Config) string {
	if cfg.ClickHouseDSN != "" {
		return "clickhouse"
	}
	return "duckdb"
}
