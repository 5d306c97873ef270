package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/storage"
)

// opSource is the op source the TypeScript SDK uploads in the sample
// 03-file-create-op-source; the SDK computed opSourceDigest locally.
const (
	opSource = "async function pipeline(x) {\n      const s = await add(x, 1);\n      const p = await multiply(s, 10);\n" +
		"      return { input: x, sum: s, product: p };\n    }"
	opSourceDigest = "IbAYBvUsLcYw62OYmvsrPpCJolzeU8Lg8ugKzsvhbUI"
)

// runFiles runs every files case against stores made by newStore.
func runFiles(t *testing.T, newStore func(t *testing.T) storage.FileStore) {
	cases := []struct {
		name string
		run  func(t *testing.T, s storage.FileStore)
	}{
		{"DigestMatchesClient", testFileDigestMatchesClient},
		{"MultiChunkRoundTrip", testFileMultiChunkRoundTrip},
		{"EmptyFile", testFileEmpty},
		{"IdempotentPerProject", testFileIdempotent},
		{"ExpectedDigestMismatchStoresNothing", testFileExpectedDigest},
		{"FailedUploadStoresNothing", testFileFailedUpload},
		{"UnknownDigestNotFound", testFileUnknownDigest},
		{"ProjectIsolation", testFileIsolation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

func createFile(t *testing.T, s storage.FileStore, project, name string, content []byte) storage.FileInfo {
	t.Helper()
	info, err := s.CreateFile(context.Background(), storage.FileCreateReq{ProjectID: project, Name: name, Content: bytes.NewReader(content)})
	if err != nil {
		t.Fatalf("CreateFile(%s, %s): %v", project, name, err)
	}
	return info
}

func readFile(t *testing.T, s storage.FileStore, project, dg string) (storage.FileInfo, []byte, error) {
	t.Helper()
	info, rc, err := s.OpenFile(context.Background(), project, dg)
	if err != nil {
		return info, nil, err
	}
	defer rc.Close()
	body, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading %s: %v", dg, err)
	}
	return info, body, nil
}

func filesTotal(t *testing.T, s storage.FileStore, project string) int64 {
	t.Helper()
	st, err := s.FilesStats(context.Background(), project)
	if err != nil {
		t.Fatalf("FilesStats(%s): %v", project, err)
	}
	return st.TotalSizeBytes
}

func testFileDigestMatchesClient(t *testing.T, s storage.FileStore) {
	info := createFile(t, s, "e/p", "blob", []byte(opSource))
	if info.Digest != opSourceDigest {
		t.Fatalf("digest %s, want the client's %s", info.Digest, opSourceDigest)
	}
	got, body, err := readFile(t, s, "e/p", opSourceDigest)
	if err != nil || string(body) != opSource || got.Name != "blob" || got.SizeBytes != int64(len(opSource)) {
		t.Fatalf("read back %+v %q, %v", got, body, err)
	}
}

func testFileMultiChunkRoundTrip(t *testing.T, s storage.FileStore) {
	content := make([]byte, 2*storage.FileChunkSize+12345)
	for i := range content {
		content[i] = byte(i*7 + i/storage.FileChunkSize)
	}
	info := createFile(t, s, "e/p", "big.bin", content)
	if info.Digest != digest.BytesDigest(content) || info.SizeBytes != int64(len(content)) {
		t.Fatalf("created %+v, want digest %s size %d", info, digest.BytesDigest(content), len(content))
	}
	_, body, err := readFile(t, s, "e/p", info.Digest)
	if err != nil || !bytes.Equal(body, content) {
		t.Fatalf("content differs after the round trip (%d bytes read, err %v)", len(body), err)
	}
	if got := filesTotal(t, s, "e/p"); got != int64(len(content)) {
		t.Fatalf("total size %d, want %d", got, len(content))
	}
}

func testFileEmpty(t *testing.T, s storage.FileStore) {
	info := createFile(t, s, "e/p", "", nil)
	if info.Digest != digest.BytesDigest(nil) || info.Name != storage.DefaultFileName {
		t.Fatalf("empty file: %+v", info)
	}
	_, body, err := readFile(t, s, "e/p", info.Digest)
	if err != nil || len(body) != 0 {
		t.Fatalf("empty file read back %q, %v", body, err)
	}
}

func testFileIdempotent(t *testing.T, s storage.FileStore) {
	first := createFile(t, s, "e/p", "a.txt", []byte("same bytes"))
	second := createFile(t, s, "e/p", "b.txt", []byte("same bytes"))
	if second.Digest != first.Digest || second.Name != "a.txt" {
		t.Fatalf("second upload %+v, want the first file %+v back", second, first)
	}
	if got := filesTotal(t, s, "e/p"); got != int64(len("same bytes")) {
		t.Fatalf("total size %d after a duplicate upload, want it counted once", got)
	}
}

func testFileExpectedDigest(t *testing.T, s storage.FileStore) {
	wrong := strings.Repeat("A", digest.Len)
	_, err := s.CreateFile(context.Background(), storage.FileCreateReq{ProjectID: "e/p", Name: "x",
		ExpectedDigest: &wrong, Content: strings.NewReader("content")})
	if !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("mismatching expected_digest: err %v, want ErrConflict", err)
	}
	right := digest.BytesDigest([]byte("content"))
	if _, _, err := readFile(t, s, "e/p", right); !errors.Is(err, storage.ErrNotFound) || filesTotal(t, s, "e/p") != 0 {
		t.Fatalf("a refused upload left a file behind (open err %v)", err)
	}
	info, err := s.CreateFile(context.Background(), storage.FileCreateReq{ProjectID: "e/p", Name: "x",
		ExpectedDigest: &right, Content: strings.NewReader("content")})
	if err != nil || info.Digest != right {
		t.Fatalf("matching expected_digest: %+v, %v", info, err)
	}
}

// failingReader yields n bytes, then err.
type failingReader struct {
	n   int
	err error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, r.err
	}
	k := min(len(p), r.n)
	clear(p[:k])
	r.n -= k
	return k, nil
}

func testFileFailedUpload(t *testing.T, s storage.FileStore) {
	tooBig := fmt.Errorf("upload over the limit: %w", storage.ErrTooLarge)
	_, err := s.CreateFile(context.Background(), storage.FileCreateReq{ProjectID: "e/p", Name: "x",
		Content: &failingReader{n: storage.FileChunkSize + 10, err: tooBig}})
	if !errors.Is(err, storage.ErrTooLarge) {
		t.Fatalf("failed read: err %v, want it wrapped (ErrTooLarge)", err)
	}
	if got := filesTotal(t, s, "e/p"); got != 0 {
		t.Fatalf("a failed upload counts %d bytes", got)
	}
}

func testFileUnknownDigest(t *testing.T, s storage.FileStore) {
	if _, _, err := readFile(t, s, "e/p", digest.BytesDigest([]byte("never stored"))); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown digest: err %v, want ErrNotFound", err)
	}
}

func testFileIsolation(t *testing.T, s storage.FileStore) {
	a := createFile(t, s, "a/p", "secret.txt", []byte("project A only"))
	if _, _, err := readFile(t, s, "b/p", a.Digest); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("project B opened A's file: err %v", err)
	}
	if got := filesTotal(t, s, "b/p"); got != 0 {
		t.Fatalf("project B's stats count A's files: %d", got)
	}
	// B uploading the same bytes gets its own file, named its own way.
	b := createFile(t, s, "b/p", "mine.txt", []byte("project A only"))
	if b.Name != "mine.txt" || b.Digest != a.Digest {
		t.Fatalf("B's upload of the same bytes came back as %+v", b)
	}
	if got := filesTotal(t, s, "a/p"); got != int64(len("project A only")) {
		t.Fatalf("A's total changed to %d by B's upload", got)
	}
}
