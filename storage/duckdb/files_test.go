package duckdb

import (
	"bytes"
	"context"
	"testing"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/conformance"
)

func TestFilesConformance(t *testing.T) {
	conformance.RunFiles(t, func(t *testing.T) storage.FileStore { return openTestStore(t) })
}

func TestFileChunksAreBoundedRows(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	content := bytes.Repeat([]byte("x"), 3*storage.FileChunkSize+1)
	if _, err := s.CreateFile(ctx, storage.FileCreateReq{ProjectID: "e/p", Name: "f", Content: bytes.NewReader(content)}); err != nil {
		t.Fatal(err)
	}
	// A duplicate upload must not leave its chunks behind.
	if _, err := s.CreateFile(ctx, storage.FileCreateReq{ProjectID: "e/p", Name: "g", Content: bytes.NewReader(content)}); err != nil {
		t.Fatal(err)
	}
	var rows, biggest int64
	if err := s.DB().QueryRowContext(ctx, `SELECT count(*), max(octet_length(data)) FROM file_chunks`).Scan(&rows, &biggest); err != nil {
		t.Fatal(err)
	}
	if rows != 4 || biggest != storage.FileChunkSize {
		t.Fatalf("%d chunk rows, largest %d bytes; want 4 rows of at most %d", rows, biggest, storage.FileChunkSize)
	}
}

func TestStaleChunksAreSwept(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO file_chunks VALUES ('e/p', 'orphan', 0, 'abc', TIMESTAMP '2000-01-01')`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateFile(ctx, storage.FileCreateReq{ProjectID: "e/p", Content: bytes.NewReader([]byte("new"))}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM file_chunks WHERE content_id = 'orphan'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("orphaned chunk still there (%d, %v)", n, err)
	}
}
