package duckdb

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"

	"github.com/weftdev/weft/storage"
)

// The raw OTel span of a call (otel_dump) is as large as its mapped
// attributes and is only ever read back whole, never filtered on. It is
// kept compressed, as text so the column stays VARCHAR: a codec prefix
// followed by base64. S2 compresses a ~1.5 KB span in 0.6 µs where zstd's
// fastest level took 5.4 µs for a fifth fewer bytes; at ingest rates of
// tens of thousands of spans a second the CPU matters more. Values written
// by earlier versions carry the zstd prefix and are still read; values
// without a prefix are plain JSON.
const (
	s2Prefix   = "s2:"
	zstdPrefix = "zstd:"
)

// dumpCodec compresses and restores otel_dump values. Both directions are
// safe for concurrent use.
type dumpCodec struct {
	dec *zstd.Decoder
}

func newDumpCodec() (*dumpCodec, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
	if err != nil {
		return nil, fmt.Errorf("otel_dump decoder: %w", err)
	}
	return &dumpCodec{dec: dec}, nil
}

// pack returns the stored form of a dump (nil stays NULL): compressed
// when that makes it smaller, else the JSON itself, which readers tell
// from the compressed forms by its first byte. Base64 adds a third, so
// text that compresses poorly (long generated text, encoded payloads) was
// stored larger than it arrived. A VARCHAR cannot hold invalid UTF-8, so
// such a dump is compressed whatever the size.
func (c *dumpCodec) pack(dump json.RawMessage) any {
	if dump == nil {
		return nil
	}
	z := s2.Encode(make([]byte, s2.MaxEncodedLen(len(dump))), dump)
	n := len(s2Prefix) + base64.RawStdEncoding.EncodedLen(len(z))
	if n >= len(dump) && utf8.Valid(dump) {
		return string(dump)
	}
	out := make([]byte, n)
	copy(out, s2Prefix)
	base64.RawStdEncoding.Encode(out[len(s2Prefix):], z)
	return string(out)
}

// packAll packs the raw spans of ops, the second half on another
// goroutine: the store's single writer is the ingest path's narrowest
// point, and compressing spans was a tenth of its work.
func (c *dumpCodec) packAll(ops []storage.CallOp) []any {
	out := make([]any, len(ops))
	pack := func(from, to int) {
		for i := from; i < to; i++ {
			out[i] = c.pack(ops[i].Part.Call.OtelDump)
		}
	}
	half := len(ops) / 2
	if half < 64 {
		pack(0, len(ops))
		return out
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		pack(half, len(ops))
	}()
	pack(0, half)
	<-done
	return out
}

// unpack restores a stored dump.
func (c *dumpCodec) unpack(stored string) (json.RawMessage, error) {
	if body, ok := strings.CutPrefix(stored, s2Prefix); ok {
		z, err := base64.RawStdEncoding.DecodeString(body)
		if err != nil {
			return nil, fmt.Errorf("otel_dump: %w", err)
		}
		out, err := s2.Decode(nil, z)
		if err != nil {
			return nil, fmt.Errorf("otel_dump: %w", err)
		}
		return out, nil
	}
	body, ok := strings.CutPrefix(stored, zstdPrefix)
	if !ok {
		return json.RawMessage(stored), nil
	}
	z, err := base64.RawStdEncoding.DecodeString(body)
	if err != nil {
		return nil, fmt.Errorf("otel_dump: %w", err)
	}
	out, err := c.dec.DecodeAll(z, nil)
	if err != nil {
		return nil, fmt.Errorf("otel_dump: %w", err)
	}
	return out, nil
}
