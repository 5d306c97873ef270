package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// Options tunes a Store beyond what the DSN says.
type Options struct {
	// Retention returns how long a call of a project anchored (started)
	// at the given time is kept after it; zero or negative keeps it. nil
	// keeps every project's calls. It is read on every write, so it must
	// be cheap.
	Retention func(projectID string, anchor time.Time) time.Duration
	// MaxOpenConns caps the connection pool; 0 keeps the driver default.
	MaxOpenConns int
	// KeyRefresh is how stale the cached API key list may get before a
	// lookup reloads it (default 500ms): the delay before a key created or
	// revoked by another process takes effect here.
	KeyRefresh time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Store is the ClickHouse backend. Sibling files add record kinds; they
// share conn, the helpers in this file and the migration runner.
type Store struct {
	conn     driver.Conn
	chOpts   *clickhouse.Options // parsed DSN, for the database bootstrap
	opts     Options
	logger   *slog.Logger
	dialect  sqlgen.ClickHouse
	versions versionClock
	projects projectLocks
	keys     keyCache
}

// Open connects to the DSN and pings the server. The DSN is
// clickhouse://user:pass@host:9000/db for the native protocol or
// http://host:8123/db (https://...?secure=true) for HTTP; query
// parameters are clickhouse-go's. A server that does not answer gives an
// error wrapping storage.ErrUnavailable, so callers can retry. Open does
// not change the schema, and a missing database is not an error here:
// Migrate creates it.
func Open(ctx context.Context, dsn string, opts Options, logger *slog.Logger) (*Store, error) {
	chOpts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("clickhouse DSN: %w (use clickhouse://host:9000/db or http://host:8123/db)", err)
	}
	if opts.MaxOpenConns > 0 {
		chOpts.MaxOpenConns = opts.MaxOpenConns
	}
	if opts.KeyRefresh <= 0 {
		opts.KeyRefresh = 500 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	conn, err := clickhouse.Open(chOpts)
	if err != nil {
		return nil, fmt.Errorf("clickhouse open: %w", err)
	}
	if err := conn.Ping(ctx); err != nil && !missingDatabase(err) {
		return nil, errors.Join(wrapErr("ping "+chOpts.Addr[0], err), conn.Close())
	}
	s := &Store{conn: conn, chOpts: chOpts, opts: opts, logger: logger, dialect: sqlgen.NewClickHouse()}
	s.versions.now = opts.Now
	return s, nil
}

// missingDatabase reports the server's answer for a DSN database that
// does not exist yet; the server is up and Migrate creates it.
func missingDatabase(err error) bool {
	var ex *clickhouse.Exception
	return errors.As(err, &ex) && ex.Code == 81 // UNKNOWN_DATABASE
}

// Close closes the connection pool.
func (s *Store) Close() error { return s.conn.Close() }

// Capabilities reports the optional features of this backend: rows expire
// by per-project retention (Options.Retention).
func (s *Store) Capabilities() storage.Capabilities { return storage.Capabilities{TTL: true} }

// Ping checks that the server answers.
func (s *Store) Ping(ctx context.Context) error { return wrapErr("ping", s.conn.Ping(ctx)) }

// named binds args as the server-side parameters p1, p2, ... of a
// statement rendered with the ClickHouse dialect.
func (s *Store) named(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = clickhouse.Named(s.dialect.ParamName(i+1), s.dialect.ParamValue(a))
	}
	return out
}

// wrapErr names the operation and marks errors a retry may cure (the
// server unreachable, overloaded or read-only) as storage.ErrUnavailable.
func wrapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if unavailable(err) {
		return fmt.Errorf("clickhouse %s: %w: %w", op, storage.ErrUnavailable, err)
	}
	return fmt.Errorf("clickhouse %s: %w", op, err)
}

func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		return transientCode(ex.Code)
	}
	// Anything else failed before the server answered: dial, TLS, a cut
	// connection, a timeout.
	return true
}

// transientCode lists the server error codes that say "not now" rather
// than "never".
func transientCode(code int32) bool {
	switch code {
	case 159, // TIMEOUT_EXCEEDED
		164, // READONLY
		202, // TOO_MANY_SIMULTANEOUS_QUERIES
		203, // NO_FREE_CONNECTION
		209, // SOCKET_TIMEOUT
		210, // NETWORK_ERROR
		241, // MEMORY_LIMIT_EXCEEDED
		242, // TABLE_IS_READ_ONLY
		252, // TOO_MANY_PARTS
		319, // UNKNOWN_STATUS_OF_INSERT
		999: // KEEPER_EXCEPTION
		return true
	}
	return false
}
