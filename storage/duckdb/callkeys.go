package duckdb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"time"
)

// The id filter and the locator (the call keys) describe every row of the
// calls table; a false negative in either would insert a second row for a
// call or miss one in a read. They are rebuilt from the table at open,
// which took 67-81 s on 39M calls, unless a snapshot saved at the last
// clean Close still describes the table.
//
// That is decided by epochs. Each open writes a new random epoch into the
// calls file (calls_keys_epoch) before the store takes writes, and a
// snapshot records the epoch it was saved in. Any change to the calls in
// a run reaches the file after that run's epoch (a checkpoint or DuckDB's
// log carries both, in order), so a file still in a snapshot's epoch has
// changed, if at all, only by writes the snapshot saw. A crash, a copied
// file or a failed save leaves an epoch that does not match, and the keys
// are rebuilt as before.

// openCallKeys loads the call keys from the snapshot at keysPath when it
// matches the calls file, else from the table, and starts a new epoch.
func (s *Store) openCallKeys(ctx context.Context) error {
	start := time.Now()
	epoch, err := s.callsEpoch(ctx)
	if err != nil {
		return err
	}
	from := "the calls table"
	layout := newCallLocator(locatorRun, locatorSlice)
	if s.keysPath != "" && epoch != "" {
		f, l, err := readKeySnapshot(s.keysPath, epoch, layout)
		switch {
		case err == nil:
			s.ids, s.located, from = f, l, "the snapshot saved at the last shutdown"
		case errors.Is(err, fs.ErrNotExist): // a crash, or a store from before snapshots
		default:
			s.logger.Info("call keys: the snapshot saved at shutdown is not usable; rebuilding them from the calls table (a slower start, nothing lost)", "err", err)
		}
	}
	if s.ids == nil {
		s.located = layout
		if s.ids, err = loadCallKeys(ctx, s.db, s.located, loadPageRows); err != nil {
			return err
		}
	}
	if s.epoch, err = s.newCallsEpoch(ctx); err != nil {
		return err
	}
	if s.keysPath != "" {
		// Consumed: from here on the file moves to the new epoch.
		if err := os.Remove(s.keysPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("call keys: %w", err)
		}
	}
	s.reportIndex(true)
	s.logger.Info("call keys loaded", "from", from, "seconds", time.Since(start).Seconds(), "bytes", s.reportedIndex)
	return nil
}

// indexReportStep is how far the call keys' size moves before
// Options.IndexBytes hears of it again: the heap limit it sets is worth a
// brief stop of the world, not one per write.
const indexReportStep = 8 << 20

// reportIndex tells Options.IndexBytes what the call keys hold, when that
// moved by indexReportStep since it last did or force is set. The caller
// holds writeMu, or the store is not shared yet.
func (s *Store) reportIndex(force bool) {
	n := s.ids.bytes() + s.located.bytes()
	if !force && n-s.reportedIndex < indexReportStep && s.reportedIndex-n < indexReportStep {
		return
	}
	s.reportedIndex = n
	if s.indexBytes != nil {
		s.indexBytes(n)
	}
}

// callsEpoch is the calls file's epoch, "" when it has none.
func (s *Store) callsEpoch(ctx context.Context) (string, error) {
	var epoch string
	err := s.db.QueryRowContext(ctx, "SELECT coalesce(max(epoch), '') FROM calls_keys_epoch").Scan(&epoch)
	if err != nil {
		return "", fmt.Errorf("call keys epoch: %w", err)
	}
	return epoch, nil
}

// newCallsEpoch writes a new epoch into the calls file and returns it.
func (s *Store) newCallsEpoch(ctx context.Context) (string, error) {
	epoch := fmt.Sprintf("%016x%016x", rand.Uint64(), rand.Uint64())
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("call keys epoch: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "DELETE FROM calls_keys_epoch"); err != nil {
		return "", fmt.Errorf("call keys epoch: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO calls_keys_epoch VALUES ($1)", epoch); err != nil {
		return "", fmt.Errorf("call keys epoch: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("call keys epoch: %w", err)
	}
	return epoch, nil
}

// saveCallKeys saves the call keys for the next open, holding the write
// lock, which the caller keeps until the files are closed: no write may
// reach the calls after the snapshot. A failed save costs the next open
// its rebuild, nothing else.
func (s *Store) saveCallKeys() {
	if s.keysPath == "" {
		return
	}
	start := time.Now()
	if err := writeKeySnapshot(s.keysPath, s.epoch, s.ids, s.located); err != nil {
		s.logger.Warn("call keys: not saved; the next start rebuilds them from the calls table (slower, nothing lost); check the free space and permissions of data_dir", "err", err)
		return
	}
	s.logger.Info("call keys saved", "seconds", time.Since(start).Seconds())
}
