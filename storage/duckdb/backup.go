package duckdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Backup copies a consistent snapshot of the store into dst, an empty
// directory on the same machine, while the store keeps serving: the
// database files (with their DuckDB write-ahead logs) and the stored file
// contents, which together are a data directory Open accepts. See ADR 0033.
//
// It holds the single-writer lock for the copy, so no commit, and hence
// no checkpoint, changes a file while it is read: writes wait (Weft's own
// log goes on acknowledging them) and reads go on. Unlogged calls are
// checkpointed into the calls file first, under the same lock, since they
// are in memory until then. The snapshot of call keys is left out: Open
// rebuilds it from the tables.
func (s *Store) Backup(ctx context.Context, dst string) error {
	if s.dir == "" {
		return errors.New("backup: an in-memory store has no files to back up")
	}
	if err := s.lockForBackup(ctx); err != nil {
		return err
	}
	defer s.writeMu.Unlock()
	if err := s.calls.err(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	for _, name := range []string{FileName, FileName + ".wal", CallsFileName, CallsFileName + ".wal"} {
		err := copyFile(ctx, filepath.Join(s.dir, name), filepath.Join(dst, name))
		if errors.Is(err, fs.ErrNotExist) && filepath.Ext(name) == ".wal" {
			continue // checkpointed: no log to replay
		}
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
	}
	if err := copyTree(ctx, s.blobDir, filepath.Join(dst, filepath.Base(s.blobDir))); err != nil {
		return fmt.Errorf("backup: stored files: %w", err)
	}
	return nil
}

// lockForBackup takes writeMu, after checkpointing unlogged calls with
// the calls guard held (no read of calls may run during that checkpoint).
// The lock is kept from the checkpoint on, so nothing is committed between
// the checkpoint and the copy.
func (s *Store) lockForBackup(ctx context.Context) error {
	if !s.callsUnlogged {
		s.writeMu.Lock()
		return nil
	}
	return s.calls.checkpoint(func() error {
		s.writeMu.Lock()
		if err := s.calls.err(); err != nil {
			s.writeMu.Unlock()
			return fmt.Errorf("backup: %w", err)
		}
		if _, err := s.db.ExecContext(ctx, "FORCE CHECKPOINT "+callsCatalog); err != nil {
			s.writeMu.Unlock()
			return fmt.Errorf("backup: checkpoint calls: %w", err)
		}
		return nil
	})
}

// copyTree copies the regular files under src into dst, keeping the tree.
func copyTree(ctx context.Context, src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o700)
		case d.Type().IsRegular():
			return copyFile(ctx, path, target)
		}
		return nil // nothing else is stored there
	})
}

// copyFile copies src to dst (created, private) and syncs it.
func copyFile(ctx context.Context, src, dst string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy %s: %w", filepath.Base(src), err)
	}
	return nil
}
