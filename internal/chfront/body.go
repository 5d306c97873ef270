package chfront

import (
	"bufio"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/ClickHouse/ch-go/compress"
	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// maxQueryBody caps a body that holds statement text rather than data: data
// after a statement is spooled to disk and never held in memory.
const maxQueryBody = 256 << 20

// body is the request body with every layer of compression removed.
type body struct {
	r      *bufio.Reader
	closer func()
}

// openBody undoes Content-Encoding and, with decompress=1, ClickHouse's
// block compression, in the order the client applied them.
func openBody(r *http.Request, decompress bool) (*body, error) {
	raw := bufio.NewReader(r.Body)
	b := &body{r: raw, closer: func() {}}
	if empty(raw) {
		return b, nil
	}
	var src io.Reader = raw
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(raw)
		if err != nil {
			return nil, badBody(enc, err)
		}
		src = zr
	case "deflate":
		zr, err := zlib.NewReader(raw)
		if err != nil {
			return nil, badBody(enc, err)
		}
		src = zr
	case "br":
		src = brotli.NewReader(raw)
	case "zstd":
		zr, err := zstd.NewReader(raw)
		if err != nil {
			return nil, badBody(enc, err)
		}
		b.closer = zr.Close
		src = zr
	default:
		return nil, exception(36, "BAD_ARGUMENTS", "Unknown Content-Encoding of HTTP request: %s", enc)
	}
	if decompress {
		src = newBlockReader(src)
	}
	b.r = bufio.NewReader(src)
	return b, nil
}

// blockReader reads ClickHouse compressed blocks. compress.Reader reports the
// end of input as an error; a clean end between blocks becomes io.EOF here.
type blockReader struct {
	src *countingReader
	r   *compress.Reader
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func newBlockReader(r io.Reader) *blockReader {
	src := &countingReader{r: r}
	return &blockReader{src: src, r: compress.NewReader(src)}
}

func (b *blockReader) Read(p []byte) (int, error) {
	before := b.src.n
	n, err := b.r.Read(p)
	if err != nil && b.src.n == before && errors.Is(err, io.EOF) {
		return n, io.EOF
	}
	return n, err
}

func empty(r *bufio.Reader) bool {
	_, err := r.Peek(1)
	return err != nil
}

func badBody(enc string, err error) error {
	return exception(354, "CANNOT_DECOMPRESS", "Cannot decode %s request body: %v", enc, err)
}

func (b *body) empty() bool { return empty(b.r) }

func (b *body) close() { b.closer() }

// text reads the whole body as statement text.
func (b *body) text() (string, error) {
	data, err := io.ReadAll(io.LimitReader(b.r, maxQueryBody+1))
	if err != nil {
		return "", bodyError(err)
	}
	if len(data) > maxQueryBody {
		return "", exception(202, "QUERY_IS_TOO_LARGE", "Query text is larger than %d bytes", maxQueryBody)
	}
	return string(data), nil
}

// spool writes prefix and then the rest of the body to a new file in dir and
// returns its path. The engine reads INSERT data from there: handed inline,
// data would be cut at the first blank line (two consecutive 0x0A bytes,
// common in binary Native data).
func (b *body) spool(dir, prefix string) (string, error) {
	f, err := os.CreateTemp(dir, "insert-*.data")
	if err != nil {
		return "", fmt.Errorf("spool insert data: %w", err)
	}
	_, err = io.Copy(f, io.MultiReader(strings.NewReader(prefix), b.r))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", bodyError(err)
	}
	return f.Name(), nil
}

func bodyError(err error) error {
	var pathErr *os.PathError
	if errors.As(err, &pathErr) {
		return fmt.Errorf("spool insert data: %w", err)
	}
	return exception(33, "CANNOT_READ_ALL_DATA", "Cannot read request body: %v", err)
}
