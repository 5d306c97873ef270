package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
)

const keysUsage = `usage:
  weft keys create --data-dir DIR --entity NAME [--role admin|member|viewer] [--user ID]
  weft keys list   --data-dir DIR
  weft keys revoke --data-dir DIR KEY_ID

With --clickhouse-dsn DSN (env WEFT_CLICKHOUSE_DSN) the keys live in
ClickHouse, shared by every role of a scale-out deployment, instead of DIR.
Works whether or not a server is running; running servers see changes
within a second.
`

func keys(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, keysUsage)
		return errors.New("keys: no subcommand given")
	}
	fs := flag.NewFlagSet("keys "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", envOr(getenv, "WEFT_DATA_DIR", "./weft-data"), "data directory (env WEFT_DATA_DIR)")
	entity := fs.String("entity", "", "entity (team) the key is a member of")
	role := fs.String("role", "member", "admin, member or viewer")
	user := fs.String("user", "", "user id the key belongs to (default: a new one)")
	dsn := fs.String("clickhouse-dsn", getenv("WEFT_CLICKHOUSE_DSN"), "keep keys in this ClickHouse (env WEFT_CLICKHOUSE_DSN)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	store, closeStore, err := keyStore(ctx, *dataDir, *dsn, stderr)
	if err != nil {
		return err
	}
	defer closeStore()
	switch args[0] {
	case "create":
		return keysCreate(ctx, store, *entity, *role, *user, stdout)
	case "list":
		return keysList(ctx, store, stdout)
	case "revoke":
		if fs.NArg() != 1 {
			return errors.New("keys revoke: give exactly one KEY_ID (see 'weft keys list')")
		}
		if err := store.RevokeKey(ctx, fs.Arg(0), time.Now()); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", fs.Arg(0))
		return nil
	}
	fmt.Fprint(stderr, keysUsage)
	return fmt.Errorf("keys: unknown subcommand %q", args[0])
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

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

// keyStore opens the key file in dataDir, or the ClickHouse key table when
// a DSN is given.
func keyStore(ctx context.Context, dataDir, dsn string, stderr io.Writer) (auth.KeyStore, func(), error) {
	if dsn == "" {
		return auth.NewFileStore(dataDir), func() {}, nil
	}
	cfg := config.Default()
	cfg.ClickHouseDSN, cfg.MigrateOnStart = dsn, true
	store, err := app.OpenClickHouse(ctx, cfg, newLogger(stderr, "warn"))
	if err != nil {
		return nil, nil, err
	}
	return store, func() { _ = store.Close() }, nil
}
