package otlpreceiver

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"net/http"
	"strings"
)

// readBody reads the request body into buf, decompressing it, and fails
// once more than max bytes arrive on the wire or come out of the
// decompressor: a small gzip bomb is stopped as soon as it inflates past
// the limit. Chunked bodies need nothing special: net/http de-chunks them.
func readBody(w http.ResponseWriter, r *http.Request, max int64, buf *bytes.Buffer) error {
	if r.ContentLength > max {
		return tooLarge(max)
	}
	wire := http.MaxBytesReader(w, r.Body, max)
	defer wire.Close()
	var src io.Reader = wire
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		gz, err := gzip.NewReader(wire)
		if err != nil {
			return bodyError(err, max, "gzip")
		}
		defer gz.Close()
		src = gz
	case "deflate":
		zr, err := newDeflateReader(wire)
		if err != nil {
			return bodyError(err, max, "deflate body")
		}
		src = zr
	default:
		return fail(failUnsupported, "unsupported Content-Encoding %q: send gzip, deflate or no encoding", enc)
	}
	if r.ContentLength > 0 && r.ContentLength <= max {
		buf.Grow(int(r.ContentLength))
	}
	n, err := buf.ReadFrom(io.LimitReader(src, max+1))
	if err != nil {
		return bodyError(err, max, "body")
	}
	if n > max {
		return tooLarge(max)
	}
	return nil
}

func bodyError(err error, max int64, what string) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(max)
	}
	return &failure{kind: failBadRequest, msg: "cannot read the request " + what + ": " + err.Error(), err: err}
}

func tooLarge(max int64) error {
	return fail(failTooLarge, "request body is larger than %d bytes (after decompression): send smaller batches", max)
}

// newDeflateReader accepts both forms sent as "deflate": zlib-wrapped (as
// HTTP specifies) and raw deflate (as some clients send).
func newDeflateReader(r io.Reader) (io.Reader, error) {
	var head [2]byte
	n, _ := io.ReadFull(r, head[:])
	rest := io.MultiReader(bytes.NewReader(head[:n]), r)
	if n == 2 && head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
		return zlib.NewReader(rest)
	}
	return flate.NewReader(rest), nil
}
