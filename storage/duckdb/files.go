package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/storage"
)

// staleUploadAge is how old unreferenced chunks must be before a later
// upload sweeps them: older than any upload still in progress.
const staleUploadAge = 24 * time.Hour

var _ storage.FileStore = (*Store)(nil)

// CreateFile implements storage.FileStore. Each chunk is committed on its
// own so a slow upload holds the single-writer lock only for moments; the
// files row, written last, makes the content visible.
func (s *Store) CreateFile(ctx context.Context, req storage.FileCreateReq) (storage.FileInfo, error) {
	if req.ProjectID == "" {
		return storage.FileInfo{}, fmt.Errorf("project_id is required: %w", storage.ErrInvalidArgument)
	}
	name := req.Name
	if name == "" {
		name = storage.DefaultFileName
	}
	w := &chunkWriter{s: s, ctx: ctx, projectID: req.ProjectID, contentID: uuid.Must(uuid.NewV7()).String(),
		buf: make([]byte, 0, storage.FileChunkSize), now: writeTime()}
	dg, size, err := digest.FileDigest(io.TeeReader(req.Content, w))
	if err == nil {
		err = w.flush()
	}
	if err == nil {
		err = storage.CheckExpectedDigest("file "+name, req.ExpectedDigest, dg)
	}
	info := storage.FileInfo{ProjectID: req.ProjectID, Digest: dg, Name: name, SizeBytes: size, CreatedAt: w.now}
	if err == nil {
		info, err = s.commitFile(ctx, info, w)
	}
	if err != nil {
		// Best effort: the sweep of a later upload removes what this misses.
		s.dropChunks(w.contentID)
		return storage.FileInfo{}, err
	}
	return info, nil
}

// chunkWriter cuts the upload into FileChunkSize rows.
type chunkWriter struct {
	s         *Store
	ctx       context.Context
	projectID string
	contentID string
	buf       []byte
	chunks    int
	now       time.Time
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		take := min(len(p), cap(w.buf)-len(w.buf))
		w.buf = append(w.buf, p[:take]...)
		p = p[take:]
		if len(w.buf) == cap(w.buf) {
			if err := w.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (w *chunkWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	w.s.writeMu.Lock()
	_, err := w.s.db.ExecContext(w.ctx, `INSERT INTO file_chunks (project_id, content_id, chunk_index, data, created_at)
		VALUES (?, ?, ?, ?, ?)`, w.projectID, w.contentID, w.chunks, w.buf, w.now)
	w.s.writeMu.Unlock()
	if err != nil {
		return fmt.Errorf("store file chunk %d: %w", w.chunks, err)
	}
	w.chunks++
	w.buf = w.buf[:0]
	return nil
}

// commitFile publishes the uploaded chunks under their digest, unless the
// project has that content already: then the new chunks go and the
// stored file is returned.
func (s *Store) commitFile(ctx context.Context, info storage.FileInfo, w *chunkWriter) (storage.FileInfo, error) {
	var existing storage.FileInfo
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		row := tx.QueryRowContext(ctx, `SELECT name, size_bytes, created_at FROM files WHERE project_id = ? AND digest = ?`,
			info.ProjectID, info.Digest)
		switch err := row.Scan(&existing.Name, &existing.SizeBytes, &existing.CreatedAt); {
		case err == nil:
			existing.ProjectID, existing.Digest = info.ProjectID, info.Digest
			_, err = tx.ExecContext(ctx, `DELETE FROM file_chunks WHERE content_id = ?`, w.contentID)
			return err
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO files (project_id, digest, name, size_bytes, n_chunks, content_id, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, info.ProjectID, info.Digest, info.Name, info.SizeBytes, w.chunks, w.contentID, w.now); err != nil {
			return err
		}
		return sweepChunks(ctx, tx, w.now.Add(-staleUploadAge))
	})
	if err != nil {
		return storage.FileInfo{}, fmt.Errorf("store file %s: %w", info.Digest, err)
	}
	if existing.Digest != "" {
		return existing, nil
	}
	return info, nil
}

// sweepChunks removes chunks of uploads that never completed.
func sweepChunks(ctx context.Context, tx *sql.Tx, before time.Time) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM file_chunks WHERE created_at < ?
		AND content_id NOT IN (SELECT content_id FROM files)`, before)
	return err
}

func (s *Store) dropChunks(contentID string) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if _, err := s.db.Exec(`DELETE FROM file_chunks WHERE content_id = ?`, contentID); err != nil {
		s.logger.Warn("dropping chunks of a failed upload", "content_id", contentID, "err", err)
	}
}

// OpenFile implements storage.FileStore.
func (s *Store) OpenFile(ctx context.Context, projectID, dg string) (storage.FileInfo, io.ReadCloser, error) {
	info := storage.FileInfo{ProjectID: projectID, Digest: dg}
	r := &chunkReader{s: s, ctx: ctx, projectID: projectID}
	err := s.db.QueryRowContext(ctx, `SELECT name, size_bytes, created_at, n_chunks, content_id FROM files
		WHERE project_id = ? AND digest = ?`, projectID, dg).Scan(&info.Name, &info.SizeBytes, &info.CreatedAt, &r.chunks, &r.contentID)
	if errors.Is(err, sql.ErrNoRows) {
		return info, nil, fmt.Errorf("file %s not found in project %s: %w", dg, projectID, storage.ErrNotFound)
	}
	if err != nil {
		return info, nil, fmt.Errorf("read file %s: %w", dg, err)
	}
	return info, r, nil
}

// chunkReader fetches one chunk at a time, so a download holds at most one
// chunk in memory whatever the file size.
type chunkReader struct {
	s         *Store
	ctx       context.Context
	projectID string
	contentID string
	chunks    int
	next      int
	cur       []byte
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.next >= r.chunks {
			return 0, io.EOF
		}
		err := r.s.db.QueryRowContext(r.ctx, `SELECT data FROM file_chunks WHERE content_id = ? AND chunk_index = ? AND project_id = ?`,
			r.contentID, r.next, r.projectID).Scan(&r.cur)
		if err != nil {
			return 0, fmt.Errorf("read file chunk %d: %w", r.next, err)
		}
		r.next++
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

func (r *chunkReader) Close() error { return nil }

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
