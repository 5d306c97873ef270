package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/storage/duckdb"
)

// migrate prepares the store's schema and exits: ClickHouse migrations, or
// the embedded database opened once, which migrates it.
func migrate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	cfg, err := loadSettings("migrate", config.AdminFlags, args, stderr, getenv)
	if err != nil {
		return err
	}
	logger := newLogger(stderr, cfg.LogLevel)
	if cfg.ClickHouseDSN != "" {
		err = migrateClickHouse(ctx, cfg, stdout, logger)
	} else {
		err = migrateDuckDB(ctx, cfg, stdout, logger)
	}
	return err
}

func migrateClickHouse(ctx context.Context, cfg config.Config, stdout io.Writer, logger *slog.Logger) error {
	cfg.MigrateOnStart = true
	store, err := app.OpenClickHouse(ctx, cfg, logger)
	if err != nil {
		return err
	}
	applied, err := store.AppliedMigrations(ctx)
	if err != nil {
		return errors.Join(err, store.Close())
	}
	fmt.Fprintf(stdout, "ClickHouse schema up to date (%d migrations applied)\n", len(applied))
	return store.Close()
}

func migrateDuckDB(ctx context.Context, cfg config.Config, stdout io.Writer, logger *slog.Logger) error {
	store, err := duckdb.Open(ctx, cfg.DataDir, logger)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "migrations applied to %s\n", filepath.Join(cfg.DataDir, duckdb.FileName))
	return store.Close()
}
