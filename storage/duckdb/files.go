package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/internal/atomicfile"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

var _ storage.FileStore = (*Store)(nil)

// CreateFile implements storage.FileStore. The upload streams into a temp
// file while it is hashed; once synced it is renamed to its digest, and
// only then does the files row make it visible to the project.
func (s *Store) CreateFile(ctx context.Context, req storage.FileCreateReq) (storage.FileInfo, error) {
	name, err := storekit.FileName(req)
	if err != nil {
		return storage.FileInfo{}, err
	}
	dg, size, err := s.writeBlob(req.Content)
	if err != nil {
		return storage.FileInfo{}, err
	}
	if err := storage.CheckExpectedDigest("file "+name, req.ExpectedDigest, dg); err != nil {
		return storage.FileInfo{}, err
	}
	info := storage.FileInfo{ProjectID: req.ProjectID, Digest: dg, Name: name, SizeBytes: size, CreatedAt: writeTime()}
	return s.commitFile(ctx, info)
}

// writeBlob stores content under its digest and returns digest and size.
// Content another upload already stored is not written twice.
func (s *Store) writeBlob(content io.Reader) (string, int64, error) {
	tmp, err := os.CreateTemp(s.blobDir, ".upload-*")
	if err != nil {
		return "", 0, fmt.Errorf("file upload: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	dg, size, err := digest.FileDigest(io.TeeReader(content, tmp))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, fmt.Errorf("file upload: %w", err)
	}
	final := s.blobPath(dg)
	if err := os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
		return "", 0, fmt.Errorf("file upload: %w", err)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", 0, fmt.Errorf("file upload: %w", err)
	}
	return dg, size, atomicfile.SyncDir(filepath.Dir(final))
}

func (s *Store) blobPath(dg string) string {
	return filepath.Join(s.blobDir, dg[:2], dg)
}

// commitFile records that the project has the content, unless it has it
// already, in which case the stored file is returned.
func (s *Store) commitFile(ctx context.Context, info storage.FileInfo) (storage.FileInfo, error) {
	var existing storage.FileInfo
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		row := tx.QueryRowContext(ctx, `SELECT name, size_bytes, created_at FROM files WHERE project_id = ? AND digest = ?`,
			info.ProjectID, info.Digest)
		switch err := row.Scan(&existing.Name, &existing.SizeBytes, &existing.CreatedAt); {
		case err == nil:
			existing.ProjectID, existing.Digest = info.ProjectID, info.Digest
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO files (project_id, digest, name, size_bytes, created_at) VALUES (?, ?, ?, ?, ?)`,
			info.ProjectID, info.Digest, info.Name, info.SizeBytes, info.CreatedAt)
		return err
	})
	if err != nil {
		return storage.FileInfo{}, fmt.Errorf("store file %s: %w", info.Digest, err)
	}
	if existing.Digest != "" {
		return existing, nil
	}
	return info, nil
}

// OpenFile implements storage.FileStore: the content streams from disk.
func (s *Store) OpenFile(ctx context.Context, projectID, dg string) (storage.FileInfo, io.ReadCloser, error) {
	info := storage.FileInfo{ProjectID: projectID, Digest: dg}
	err := s.db.QueryRowContext(ctx, `SELECT name, size_bytes, created_at FROM files WHERE project_id = ? AND digest = ?`,
		projectID, dg).Scan(&info.Name, &info.SizeBytes, &info.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return info, nil, fmt.Errorf("file %s not found in project %s: %w", dg, projectID, storage.ErrNotFound)
	}
	if err != nil {
		return info, nil, fmt.Errorf("read file %s: %w", dg, err)
	}
	f, err := os.Open(s.blobPath(dg))
	if err != nil {
		return info, nil, fmt.Errorf("read file %s: %w", dg, err)
	}
	return info, f, nil
}

// FilesStats implements storage.FileStore.
func (s *Store) FilesStats(ctx context.Context, projectID string) (storage.FilesStats, error) {
	var st storage.FilesStats
	err := s.db.QueryRowContext(ctx, `SELECT CAST(coalesce(sum(size_bytes), 0) AS BIGINT) FROM files WHERE project_id = ?`,
		projectID).Scan(&st.TotalSizeBytes)
	if err != nil {
		return st, fmt.Errorf("files stats: %w", err)
	}
	return st, nil
}
