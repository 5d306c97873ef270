package app

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
)

// BackupPath answers an online backup of the embedded store as a tar
// stream: a data directory `weft restore` unpacks and `weft serve` opens.
// See ADR 0033.
const BackupPath = "/admin/backup"

// backupWriteWindow is how long one file of the stream may take to reach
// the client before the connection is given up.
const backupWriteWindow = 2 * time.Minute

// snapshotter is a store that copies a consistent snapshot of itself
// into a directory while serving: the embedded store.
type snapshotter interface {
	Backup(ctx context.Context, dst string) error
}

// serveBackup answers POST /admin/backup for an instance admin: every
// write acknowledged before the request is applied, the store snapshot is
// copied next to the data (the store's writes wait only for that copy),
// the data directory's keys and secrets key are added, and the copy is
// streamed and removed.
func (s *Server) serveBackup(w http.ResponseWriter, r *http.Request) {
	p, ok := httpapi.PrincipalFrom(r.Context())
	if !ok || p.Entity != auth.AllEntities || p.Role != auth.RoleAdmin {
		httpapi.WriteError(w, r, s.logger, fmt.Errorf("%w: a backup holds every project and the keys; use the instance admin key (%s in the data directory)", auth.ErrForbidden, auth.AdminKeyFile))
		return
	}
	store, ok := s.store.(snapshotter)
	if !ok {
		httpapi.WriteError(w, r, s.logger, httpapi.Errorf(http.StatusBadRequest,
			"backup: this server stores in ClickHouse; back up ClickHouse with its own BACKUP command (see docs/operations.md)"))
		return
	}
	if s.write.barrier != nil {
		if err := s.write.barrier(r.Context()); err != nil {
			httpapi.WriteError(w, r, s.logger, fmt.Errorf("backup: waiting for acknowledged writes: %w", err))
			return
		}
	}
	staging, err := os.MkdirTemp(s.cfg.DataDir, ".backup-")
	if err != nil {
		httpapi.WriteError(w, r, s.logger, fmt.Errorf("backup: staging directory in the data directory: %w", err))
		return
	}
	defer func() {
		if err := os.RemoveAll(staging); err != nil {
			s.logger.Warn("backup: could not remove its staging copy; delete it to free the disk", "dir", staging, "err", err)
		}
	}()
	started := time.Now()
	if err := store.Backup(r.Context(), staging); err != nil {
		httpapi.WriteError(w, r, s.logger, err)
		return
	}
	for _, path := range []string{filepath.Join(s.cfg.DataDir, auth.KeysFile), filepath.Join(s.cfg.DataDir, auth.AdminKeyFile), s.cfg.KeyFile()} {
		if err := copyIfExists(path, filepath.Join(staging, filepath.Base(path))); err != nil {
			httpapi.WriteError(w, r, s.logger, fmt.Errorf("backup: %w", err))
			return
		}
	}
	s.logger.Info("backup snapshot taken; streaming it", "took", time.Since(started).Round(time.Millisecond))
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set("Content-Disposition", `attachment; filename="weft-backup.tar"`)
	w.WriteHeader(http.StatusOK)
	if err := writeTar(w, http.NewResponseController(w), staging); err != nil {
		// The status is sent; a client sees a truncated tar, which
		// `weft backup` reports and does not keep.
		s.logger.Info("backup stream ended early", "err", err)
	}
}

// writeTar streams the regular files under dir as a tar, extending the
// write deadline per file so a large store is not cut by write_timeout.
func writeTar(w io.Writer, rc *http.ResponseController, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name, h.Uid, h.Gid, h.Uname, h.Gname = filepath.ToSlash(rel), 0, 0, "", ""
		if d.IsDir() {
			h.Name += "/"
		}
		_ = rc.SetWriteDeadline(time.Now().Add(backupWriteWindow))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// copyIfExists copies a small file of the data directory; a missing one
// (no admin key yet, a secrets key from the environment) is skipped.
func copyIfExists(src, dst string) error {
	b, err := os.ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o600)
}
