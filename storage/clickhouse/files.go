package clickhouse

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

var _ storage.FileStore = (*Store)(nil)

// cleanupTimeout bounds the deletion of an abandoned upload's chunks,
// which runs even when the request's context is done.
const cleanupTimeout = 30 * time.Second

// CreateFile implements storage.FileStore. Content streams into
// file_chunks while it is hashed, one storage.FileChunkSize row per
// INSERT, under a fresh upload id; the last chunk is held back until the
// digest is known, so a file of one chunk the project has already costs
// no write. The files row, written last under the project's lock, makes
// the content visible; a failed or duplicate upload deletes its chunks.
func (s *Store) CreateFile(ctx context.Context, req storage.FileCreateReq) (storage.FileInfo, error) {
	name, err := storekit.FileName(req)
	if err != nil {
		return storage.FileInfo{}, err
	}
	up, err := s.newUpload(ctx, req.ProjectID)
	if err != nil {
		return storage.FileInfo{}, err
	}
	dg, size, err := digest.FileDigest(io.TeeReader(req.Content, up))
	if err != nil {
		return storage.FileInfo{}, up.abandon(fmt.Errorf("file upload: %w", err))
	}
	if err := storage.CheckExpectedDigest("file "+name, req.ExpectedDigest, dg); err != nil {
		return storage.FileInfo{}, up.abandon(err)
	}
	if stored, found, err := s.fileInfo(ctx, req.ProjectID, dg); err != nil || found {
		return stored.FileInfo, up.abandon(err)
	}
	if err := up.flush(); err != nil {
		return storage.FileInfo{}, up.abandon(err)
	}
	f := storedFile{FileInfo: storage.FileInfo{ProjectID: req.ProjectID, Digest: dg, Name: name, SizeBytes: size,
		CreatedAt: s.writeTime()}, chunks: up.chunks, upload: up.id}
	return s.commitFile(ctx, f, up)
}

// commitFile writes the files row unless the project got the content in
// the meantime, in which case the upload is dropped and the stored file
// returned.
func (s *Store) commitFile(ctx context.Context, f storedFile, up *fileUpload) (storage.FileInfo, error) {
	unlock := s.projects.lock([]string{f.ProjectID})
	defer unlock()
	if stored, found, err := s.fileInfo(ctx, f.ProjectID, f.Digest); err != nil || found {
		return stored.FileInfo, up.abandon(err)
	}
	err := s.insertBatch(ctx, "files", "project_id, digest, name, size_bytes, n_chunks, upload_id, created_at", 1,
		func(int) []any {
			return []any{f.ProjectID, f.Digest, f.Name, f.SizeBytes, f.chunks, f.upload, f.CreatedAt}
		})
	if err != nil {
		return storage.FileInfo{}, up.abandon(err)
	}
	return f.FileInfo, nil
}

// storedFile is a files row.
type storedFile struct {
	storage.FileInfo
	chunks uint32
	upload string
}

// fileInfo reads the project's file of a digest.
func (s *Store) fileInfo(ctx context.Context, projectID, dg string) (storedFile, bool, error) {
	f := storedFile{FileInfo: storage.FileInfo{ProjectID: projectID, Digest: dg}}
	found := false
	err := s.eachRow(ctx, "read file", `SELECT name, size_bytes, n_chunks, upload_id, created_at FROM files FINAL
		WHERE project_id = {project:String} AND digest = {digest:String}`, func(rows driver.Rows) error {
		found = true
		err := rows.Scan(&f.Name, &f.SizeBytes, &f.chunks, &f.upload, &f.CreatedAt)
		f.CreatedAt = f.CreatedAt.UTC()
		return err
	}, clickhouse.Named("project", projectID), clickhouse.Named("digest", dg))
	return f, found, err
}

// OpenFile implements storage.FileStore: the reader fetches one chunk row
// at a time, with ctx, as it is read.
func (s *Store) OpenFile(ctx context.Context, projectID, dg string) (storage.FileInfo, io.ReadCloser, error) {
	f, found, err := s.fileInfo(ctx, projectID, dg)
	if err != nil {
		return f.FileInfo, nil, err
	}
	if !found {
		return f.FileInfo, nil, fmt.Errorf("file %s not found in project %s: %w", dg, projectID, storage.ErrNotFound)
	}
	return f.FileInfo, &chunkReader{ctx: ctx, s: s, file: f}, nil
}

// FilesStats implements storage.FileStore.
func (s *Store) FilesStats(ctx context.Context, projectID string) (storage.FilesStats, error) {
	var st storage.FilesStats
	err := s.eachRow(ctx, "files stats", "SELECT toInt64(sum(size_bytes)) FROM files FINAL WHERE project_id = {project:String}",
		func(rows driver.Rows) error { return rows.Scan(&st.TotalSizeBytes) }, clickhouse.Named("project", projectID))
	return st, err
}

// fileUpload is the io.Writer an upload's content streams into: it cuts
// the content into chunk rows, holding at most one chunk.
type fileUpload struct {
	ctx     context.Context
	s       *Store
	project string
	id      string
	buf     []byte
	chunks  uint32 // chunk rows written
}

func (s *Store) newUpload(ctx context.Context, projectID string) (*fileUpload, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("file upload id: %w", err)
	}
	return &fileUpload{ctx: ctx, s: s, project: projectID, id: hex.EncodeToString(id[:])}, nil
}

// Write buffers p, writing a chunk row whenever a full chunk is followed
// by more content.
func (u *fileUpload) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if len(u.buf) == storage.FileChunkSize {
			if err := u.flush(); err != nil {
				return n - len(p), err
			}
		}
		k := min(len(p), storage.FileChunkSize-len(u.buf))
		u.buf, p = append(u.buf, p[:k]...), p[k:]
	}
	return n, nil
}

// flush writes the buffered bytes, if any, as the next chunk row.
func (u *fileUpload) flush() error {
	if len(u.buf) == 0 {
		return nil
	}
	err := u.s.insertBatch(u.ctx, "file_chunks", "project_id, upload_id, chunk_index, val_bytes", 1,
		func(int) []any { return []any{u.project, u.id, u.chunks, u.buf} })
	if err != nil {
		return err
	}
	u.chunks++
	u.buf = u.buf[:0]
	return nil
}

// abandon deletes the chunk rows written so far and returns err. A
// failed deletion is logged: the chunks are unreachable without a files
// row, so only their space is lost.
func (u *fileUpload) abandon(err error) error {
	if u.chunks == 0 {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(u.ctx), cleanupTimeout)
	defer cancel()
	derr := u.s.conn.Exec(ctx, "DELETE FROM file_chunks WHERE project_id = {project:String} AND upload_id = {upload:String}",
		clickhouse.Named("project", u.project), clickhouse.Named("upload", u.id))
	if derr != nil {
		u.s.logger.Warn("clickhouse: deleting the chunks of an abandoned upload failed; they only take space; delete them in ClickHouse with DELETE FROM file_chunks WHERE project_id = <project> AND upload_id = <upload>", "project", u.project, "upload", u.id, "err", derr)
	}
	u.chunks = 0
	return err
}

// chunkReader streams a file's chunk rows in order.
type chunkReader struct {
	ctx  context.Context
	s    *Store
	file storedFile
	next uint32
	cur  []byte
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.next == r.file.chunks {
			return 0, io.EOF
		}
		if err := r.fetch(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// fetch reads the next chunk row; a missing one is an error, never a
// silently short file.
func (r *chunkReader) fetch() error {
	found := false
	err := r.s.eachRow(r.ctx, "read file chunk", `SELECT val_bytes FROM file_chunks WHERE project_id = {project:String}
		AND upload_id = {upload:String} AND chunk_index = {index:UInt32} LIMIT 1`, func(rows driver.Rows) error {
		found = true
		return rows.Scan(&r.cur)
	}, clickhouse.Named("project", r.file.ProjectID), clickhouse.Named("upload", r.file.upload), clickhouse.Named("index", r.next))
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("clickhouse read file %s: chunk %d of %d is missing", r.file.Digest, r.next, r.file.chunks)
	}
	r.next++
	return nil
}

// Close implements io.Closer; the reader holds no connection between reads.
func (r *chunkReader) Close() error { return nil }
