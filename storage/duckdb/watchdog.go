package duckdb

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// watchEvery is how often the watchdog asks the database whether it still
// works.
const watchEvery = 2 * time.Second

// invalidatedText is how DuckDB words the error of every statement once a
// fatal error (a full disk during a checkpoint, for one) has invalidated
// a database: it refuses all work until the process opens it again. (The
// failing checkpoint says "The database has been invalidated", every
// statement after it 'Database "weft" has been invalidated'.)
const invalidatedText = "has been invalidated"

// watchProbe reads a row of a table in each database file: a statement
// that touches no table succeeds on an invalidated database.
const watchProbe = "SELECT (SELECT count(*) FROM (SELECT 1 FROM " + catalog + ".main.object_versions LIMIT 1)) + " +
	"(SELECT count(*) FROM (SELECT 1 FROM " + callsCatalog + ".main.calls LIMIT 1))"

// watchdog reports, once, that the database has been invalidated, so the
// process can stop and be started again instead of answering 503 for ever.
// Acknowledged writes wait in the write-ahead log meanwhile.
type watchdog struct {
	failed chan error
	once   sync.Once
	stop   context.CancelFunc
	done   chan struct{}
}

// report sends err on failed and closes it, the first time only.
func (w *watchdog) report(err error) {
	w.once.Do(func() {
		w.failed <- err
		close(w.failed)
	})
}

// Failed is closed after its one error when the database has been
// invalidated; it stays open while the database works.
func (s *Store) Failed() <-chan error { return s.watch.failed }

func (s *Store) startWatchdog(every time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	s.watch = &watchdog{failed: make(chan error, 1), stop: cancel, done: make(chan struct{})}
	go s.watchLoop(ctx, every)
}

func (s *Store) watchLoop(ctx context.Context, every time.Duration) {
	defer close(s.watch.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if s.calls.err() != nil {
			return // a failed commit was reported; the calls table is not read again
		}
		probe, cancel := context.WithTimeout(ctx, every)
		rows, err := s.calls.checked(s.db).QueryContext(probe, watchProbe)
		if err == nil {
			err = rows.Close()
		}
		cancel()
		if err != nil && strings.Contains(err.Error(), invalidatedText) {
			s.watch.report(fmt.Errorf("the embedded database failed and must be opened again: %w", err))
			return
		}
	}
}

// stopWatchdog ends the watch before the database closes.
func (s *Store) stopWatchdog() {
	if s.watch != nil {
		s.watch.stop()
		<-s.watch.done
	}
}
