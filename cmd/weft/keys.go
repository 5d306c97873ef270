package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
)

const keysUsage = `usage:
  weft keys create [SETTINGS] --entity NAME [--role admin|member|viewer|worker] [--user ID]
  weft keys list   [SETTINGS]
  weft keys revoke [SETTINGS] KEY_ID

SETTINGS are read as 'weft serve' reads them, so the server's weft.yaml
works here too: --config FILE, --data-dir DIR, --clickhouse-dsn DSN,
--kafka-brokers, --log-level, the WEFT_* environment variables, with the
same precedence (flag, environment, file, default). Keys live in data_dir,
or in ClickHouse when clickhouse_dsn is set, shared by every role of a
scale-out deployment. Works whether or not a server is running; running
servers see changes within a second.
`

// keyFlags are the flags of keys create.
type keyFlags struct{ entity, role, user *string }

func keys(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, keysUsage)
		return errors.New("keys: no subcommand given")
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, keysUsage)
		return nil
	}
	fs, settings := settingsFlags("keys "+args[0], config.AdminFlags, stderr, getenv)
	kf := keyFlags{
		entity: fs.String("entity", "", "entity (team) the key is a member of"),
		role:   fs.String("role", "member", "admin, member, viewer or worker (runs training jobs only)"),
		user:   fs.String("user", "", "user id the key belongs to (default: a new one)"),
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	cfg, err := settings.Config()
	if err != nil {
		return err
	}
	privateFiles() // it may create the data directory's key file or database
	store, closeStore, err := keyStore(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer closeStore()
	return keysRun(ctx, store, args[0], kf, fs.Args(), stdout, stderr)
}

func keysRun(ctx context.Context, store auth.KeyStore, sub string, kf keyFlags, args []string, stdout, stderr io.Writer) error {
	switch sub {
	case "create":
		return keysCreate(ctx, store, *kf.entity, *kf.role, *kf.user, stdout)
	case "list":
		return keysList(ctx, store, stdout)
	case "revoke":
		if len(args) != 1 {
			return errors.New("keys revoke: give exactly one KEY_ID (see 'weft keys list')")
		}
		if err := store.RevokeKey(ctx, args[0], time.Now()); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", args[0])
		return nil
	}
	fmt.Fprint(stderr, keysUsage)
	return fmt.Errorf("keys: unknown subcommand %q", sub)
}

func keysCreate(ctx context.Context, store auth.KeyStore, entity, role, user string, stdout io.Writer) error {
	if entity == "" {
		return errors.New("keys create: --entity is required (the team whose projects the key may use)")
	}
	r, err := auth.ParseRole(role)
	if err != nil {
		return fmt.Errorf("keys create: --role: %w", err)
	}
	k, secret, err := auth.NewKey(entity, r, user, time.Now())
	if err != nil {
		return fmt.Errorf("keys create: %w", err)
	}
	if err := store.PutKey(ctx, k); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created key %s for entity %s with role %s\n%s\n", k.ID, k.Entity, k.Role, secret)
	return nil
}

func keysList(ctx context.Context, store auth.KeyStore, stdout io.Writer) error {
	all, err := store.ListKeys(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tENTITY\tROLE\tUSER\tCREATED\tSTATUS")
	for _, k := range all {
		status := "active"
		if k.RevokedAt != nil {
			status = "revoked " + k.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Entity, k.Role, k.UserID, k.CreatedAt.Format(time.RFC3339), status)
	}
	return tw.Flush()
}

// keyStore opens the key file in data_dir, or the ClickHouse key table
// when clickhouse_dsn is set (migrating first unless migrate_on_start is
// false).
func keyStore(ctx context.Context, cfg config.Config, stderr io.Writer) (auth.KeyStore, func(), error) {
	if cfg.ClickHouseDSN == "" {
		return auth.NewFileStore(cfg.DataDir), func() {}, nil
	}
	store, err := app.OpenClickHouse(ctx, cfg, newLogger(stderr, quietLevel(cfg.LogLevel)))
	if err != nil {
		return nil, nil, err
	}
	return store, func() { _ = store.Close() }, nil
}

// quietLevel is the log level of a command whose answer is its output:
// warnings and errors only, or less if log_level asks for less.
func quietLevel(level string) string {
	if strings.EqualFold(level, "error") {
		return "error"
	}
	return "warn"
}
