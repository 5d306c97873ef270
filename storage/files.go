package storage

import (
	"context"
	"io"
	"time"
)

// FileChunkSize is the unit a backend that keeps content in rows (e.g.
// ClickHouse) splits files into: big enough that a 64 MiB upload is 64
// rows, small enough that neither an upload nor a download ever holds more
// than one chunk in memory.
const FileChunkSize = 1 << 20

// DefaultFileName is the stored name of an upload whose part has none.
const DefaultFileName = "<unnamed_file>"

// FileCreateReq is one upload. Content is read to EOF exactly once; a read
// error aborts the upload (wrap ErrTooLarge in it to refuse oversize
// content) and nothing is stored.
type FileCreateReq struct {
	ProjectID string
	Name      string
	// ExpectedDigest, when set, must equal the digest of Content, else
	// ErrConflict and nothing is stored.
	ExpectedDigest *string
	Content        io.Reader
}

// FileInfo describes a stored file.
type FileInfo struct {
	ProjectID string
	Digest    string
	Name      string
	SizeBytes int64
	CreatedAt time.Time
}

// FileStore keeps content-addressed files per project. Every method is
// scoped to its project: a digest stored in another project is not found.
type FileStore interface {
	// CreateFile streams Content into the store while hashing it and
	// returns the file's digest (digest.FileDigest of the bytes). Creating
	// content the project already has stores nothing new and returns the
	// existing file.
	CreateFile(ctx context.Context, req FileCreateReq) (FileInfo, error)
	// OpenFile returns a file and a reader that streams its content chunk
	// by chunk; ErrNotFound when the project has no such digest. The
	// caller closes the reader.
	OpenFile(ctx context.Context, projectID, digest string) (FileInfo, io.ReadCloser, error)
	// FilesStats sums the sizes of the project's files.
	FilesStats(ctx context.Context, projectID string) (FilesStats, error)
}

// FilesStats sums a project's files.
type FilesStats struct {
	TotalSizeBytes int64
}
