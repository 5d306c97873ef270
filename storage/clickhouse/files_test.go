package clickhouse

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/weftdev/weft/storage"
)

// chunkStats counts the chunk rows stored and the largest one.
func chunkStats(t *testing.T, s *Store) (rows, largest uint64) {
	t.Helper()
	err := s.conn.QueryRow(context.Background(), "SELECT count(), max(length(val_bytes)) FROM file_chunks").Scan(&rows, &largest)
	if err != nil {
		t.Fatal(err)
	}
	return rows, largest
}

func TestFilesChunkRows(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := context.Background()
	big := bytes.Repeat([]byte("0123456789abcdef"), (3*storage.FileChunkSize+1)/16+1)[:3*storage.FileChunkSize+1]
	tests := []struct {
		name          string
		project       string
		content       []byte
		rows, largest uint64
	}{
		{"one chunk", "e/p", []byte("small"), 1, 5},
		{"exactly one chunk", "e/p", big[:storage.FileChunkSize], 2, storage.FileChunkSize},
		{"three chunks and a byte", "e/p", big, 6, storage.FileChunkSize},
		{"duplicate of one chunk writes nothing", "e/p", []byte("small"), 6, storage.FileChunkSize},
		{"duplicate of many chunks leaves none behind", "e/p", big, 6, storage.FileChunkSize},
		{"same bytes in another project", "o/p", big, 10, storage.FileChunkSize},
	}
	for _, tt := range tests {
		info, err := s.CreateFile(ctx, storage.FileCreateReq{ProjectID: tt.project, Name: tt.name, Content: bytes.NewReader(tt.content)})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if rows, largest := chunkStats(t, s); rows != tt.rows || largest != tt.largest {
			t.Errorf("%s: %d chunk rows, largest %d; want %d, %d", tt.name, rows, largest, tt.rows, tt.largest)
		}
		_, rc, err := s.OpenFile(ctx, tt.project, info.Digest)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, tt.content) {
			t.Errorf("%s: read back %d bytes, %v; want %d", tt.name, len(got), err, len(tt.content))
		}
	}
}

// cutReader yields n bytes, then fails.
type cutReader struct{ n int }

func (r *cutReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errors.New("client went away")
	}
	k := min(len(p), r.n)
	r.n -= k
	return k, nil
}

func TestFilesFailedUploadDeletesItsChunks(t *testing.T) {
	s := openTestStore(t, Options{})
	_, err := s.CreateFile(context.Background(), storage.FileCreateReq{ProjectID: "e/p",
		Content: &cutReader{n: 2*storage.FileChunkSize + 7}})
	if err == nil {
		t.Fatal("an upload whose content failed succeeded")
	}
	if rows, _ := chunkStats(t, s); rows != 0 {
		t.Fatalf("the failed upload left %d chunk rows", rows)
	}
}

func TestFilesMissingChunkIsAReadError(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := context.Background()
	content := bytes.Repeat([]byte{7}, 2*storage.FileChunkSize)
	info, err := s.CreateFile(ctx, storage.FileCreateReq{ProjectID: "e/p", Content: bytes.NewReader(content)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.conn.Exec(ctx, "DELETE FROM file_chunks WHERE chunk_index = 1"); err != nil {
		t.Fatal(err)
	}
	_, rc, err := s.OpenFile(ctx, "e/p", info.Digest)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err == nil || len(got) != storage.FileChunkSize {
		t.Fatalf("read %d bytes, err %v; want the first chunk and then an error", len(got), err)
	}
}
