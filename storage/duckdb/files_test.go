package duckdb

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/weftdev/weft/storage"
)

func TestFileContentLivesOnDiskOnce(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	content := bytes.Repeat([]byte("x"), 3*storage.FileChunkSize+1)
	a, err := s.CreateFile(ctx, storage.FileCreateReq{ProjectID: "e/p", Name: "f", Content: bytes.NewReader(content)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateFile(ctx, storage.FileCreateReq{ProjectID: "other/p", Name: "g", Content: bytes.NewReader(content)}); err != nil {
		t.Fatal(err)
	}
	blobs, _ := filepath.Glob(filepath.Join(dir, "files", "*", "*"))
	if len(blobs) != 1 || filepath.Base(blobs[0]) != a.Digest {
		t.Fatalf("blobs on disk = %v, want one named %s", blobs, a.Digest)
	}
	st, err := os.Stat(blobs[0])
	if err != nil || st.Size() != int64(len(content)) {
		t.Fatalf("blob size %v, %v", st, err)
	}
}

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n > 3 {
		return 0, errors.New("client went away")
	}
	r.n++
	return copy(p, bytes.Repeat([]byte("y"), len(p))), nil
}

func TestFailedUploadLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateFile(context.Background(), storage.FileCreateReq{ProjectID: "e/p", Content: &failingReader{}}); err == nil {
		t.Fatal("failed upload succeeded")
	}
	left, _ := filepath.Glob(filepath.Join(dir, "files", "*"))
	if len(left) != 0 {
		t.Fatalf("upload left %v behind", left)
	}
	st, err := s.FilesStats(context.Background(), "e/p")
	if err != nil || st.TotalSizeBytes != 0 {
		t.Fatalf("stats after failed upload = %+v, %v", st, err)
	}
}
