package duckdb

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// The raw OTel span of a call (otel_dump) is as large as its mapped
// attributes and is only ever read back whole, never filtered on. Stored
// as plain text it doubled what every OTLP commit wrote to the WAL; it is
// kept zstd-compressed instead, as text so the column stays VARCHAR:
// dumpPrefix followed by base64. Values without the prefix are plain JSON.
const dumpPrefix = "zstd:"

// dumpCodec compresses and restores otel_dump values. Both directions are
// safe for concurrent use.
type dumpCodec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

func newDumpCodec() (*dumpCodec, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("otel_dump encoder: %w", err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
	if err != nil {
		return nil, fmt.Errorf("otel_dump decoder: %w", err)
	}
	return &dumpCodec{enc: enc, dec: dec}, nil
}

// pack returns the stored form of a dump (nil stays NULL).
func (c *dumpCodec) pack(dump json.RawMessage) any {
	if dump == nil {
		return nil
	}
	z := c.enc.EncodeAll(dump, make([]byte, 0, len(dump)/3))
	return dumpPrefix + base64.RawStdEncoding.EncodeToString(z)
}

// unpack restores a stored dump.
func (c *dumpCodec) unpack(stored string) (json.RawMessage, error) {
	body, ok := strings.CutPrefix(stored, dumpPrefix)
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
