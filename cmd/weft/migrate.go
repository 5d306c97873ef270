package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/automations/kafkaevents"
	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/storage/duckdb"
)

// migrate prepares what serve needs and exits: the store's schema
// (ClickHouse migrations, or the embedded database opened once, which
// migrates it) and, with kafka_brokers, the Kafka topics.
func migrate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	cfg, err := loadSettings("migrate", config.AdminFlags, args, stderr, getenv)
	if err != nil {
		return err
	}
	privateFiles() // it may create the data directory's database
	logger := newLogger(stderr, cfg.LogLevel)
	if cfg.ClickHouseDSN != "" {
		err = migrateClickHouse(ctx, cfg, stdout, logger)
	} else {
		err = migrateDuckDB(ctx, cfg, stdout, logger)
	}
	if err != nil {
		return err
	}
	return ensureTopics(ctx, cfg, stdout, logger)
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
	fmt.Fprintf(stdout, "migrations applied to %s and %s\n", filepath.Join(cfg.DataDir, duckdb.FileName), duckdb.CallsFileName)
	return store.Close()
}

// ensureTopics creates the call and automation-event topics and their
// dead-letter topics, and the training job queue's one-partition command
// log, when Kafka is configured, unless
// kafka.create_topics leaves them to the operator.
func ensureTopics(ctx context.Context, cfg config.Config, stdout io.Writer, logger *slog.Logger) error {
	if len(cfg.Kafka.Brokers) == 0 {
		return nil
	}
	events := cfg.Automations.EventsTopic
	commands := cfg.Training.CommandsTopic
	topics := strings.Join([]string{cfg.Kafka.Topic, cfg.Kafka.DeadLetterTopic, events, kafkaevents.DeadLetterTopic(events), commands}, ", ")
	if !cfg.Kafka.CreateTopics {
		fmt.Fprintf(stdout, "Kafka topics %s left alone (kafka.create_topics is false)\n", topics)
		return nil
	}
	if err := kafkabase.EnsureTopics(ctx, cfg.Kafka, logger); err != nil {
		return fmt.Errorf("kafka topics: %w", err)
	}
	if err := kafkaevents.EnsureTopic(ctx, cfg.Kafka, events, logger); err != nil {
		return fmt.Errorf("kafka topics: %w", err)
	}
	if err := kafkabase.EnsureTopic(ctx, cfg.Kafka, commands, 1, logger); err != nil {
		return fmt.Errorf("kafka topics: %w", err)
	}
	fmt.Fprintf(stdout, "Kafka topics %s ready at %s\n", topics, strings.Join(cfg.Kafka.Brokers, ","))
	return nil
}
