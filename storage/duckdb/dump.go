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

// The raw OTel span of a call (otel_dump) is only ever read back whole,
// never filtered on. Its stored forms, told apart by their first bytes:
//
//   - plain JSON, as received;
//   - "r:", JSON whose values repeated in the row's inputs and output are
//     references to them (see dumprefs.go), and "o=", that form with the
//     output it references kept inside;
//   - "s2:" and base64, S2-compressed: a dump that is not valid UTF-8,
//     which a VARCHAR cannot hold. Earlier versions used it for any dump
//     it shrank, and "zstd:" before that; both are still read.
//
// Compression is otherwise the column's (zstd, see 0001_calls.sql): it
// sees the whole column segment, where one dump compressed alone, then
// base64-encoded, was rarely smaller than it came.
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

// pack returns the stored form of a part's dump (nil stays NULL). A
// part's inputs may be referenced when it carries the start side, which
// writes them with the dump; its output only when it carries both.
func (c *dumpCodec) pack(p *storage.CallPart) any {
	dump := p.Call.OtelDump
	if dump == nil {
		return nil
	}
	var sources []refSource
	if p.Kind.HasStart() {
		sources = append(sources, refSource{column: 'i', text: p.Call.Inputs})
		if p.Kind.HasEnd() {
			sources = append(sources, refSource{column: 'o', text: p.Call.Output})
		}
	}
	// Only the bytes left in the dump need checking: referenced ones are
	// the inputs' and output's, which the VARCHAR columns check.
	if packed := withRefs(dump, sources...); packed != nil && utf8.Valid(packed) {
		return string(packed)
	}
	if utf8.Valid(dump) {
		return string(dump)
	}
	z := s2.Encode(make([]byte, s2.MaxEncodedLen(len(dump))), dump)
	out := make([]byte, len(s2Prefix)+base64.RawStdEncoding.EncodedLen(len(z)))
	copy(out, s2Prefix)
	base64.RawStdEncoding.Encode(out[len(s2Prefix):], z)
	return string(out)
}

// packAll packs the raw spans of ops, the second half on another
// goroutine: the store's single writer is the ingest path's narrowest
// point.
func (c *dumpCodec) packAll(ops []storage.CallOp) []any {
	out := make([]any, len(ops))
	pack := func(from, to int) {
		for i := from; i < to; i++ {
			out[i] = c.pack(ops[i].Part)
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

// unpack restores a dump as the read expression returns it.
func (c *dumpCodec) unpack(stored string) (json.RawMessage, error) {
	if strings.HasPrefix(stored, refPrefix) || strings.HasPrefix(stored, embeddedOutputPrefix) {
		return restoreRefs(stored)
	}
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
