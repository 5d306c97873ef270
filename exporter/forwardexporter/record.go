package forwardexporter

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/klauspost/compress/s2"

	"github.com/weftdev/weft/exporter/storageexporter"
	"github.com/weftdev/weft/storage"
)

// recordVersion is the first byte of every buffer record. The buffer
// outlives the binary that wrote it (an upgrade with a backlog), so a new
// layout takes a new version and readers keep reading the old one.
const recordVersion = 1

// Record kinds, the second byte.
const (
	kindCalls = 1 // Weave call records, in the storage exporter's form
	kindOTLP  = 2 // one OTLP export request, protobuf, S2-compressed
)

// maxKeyBytes bounds a stored API key or project; real ones are under
// 600 bytes.
const maxKeyBytes = 4096

// errCorrupt marks a record that cannot be read back.
var errCorrupt = errors.New("corrupt buffer record")

// load is what a record, or a batch of records, carries: call records, or
// OTLP requests that share a project_id header.
type load struct {
	ops []storage.CallOp
	// otlp holds protobuf ExportTraceServiceRequests; spans the span
	// count of each; project their project_id header ("" for none).
	otlp    [][]byte
	spans   []int
	project string
}

func (l load) isOTLP() bool { return l.otlp != nil }

// units is how many pieces a refused load can be split into.
func (l load) units() int {
	if l.isOTLP() {
		return len(l.otlp)
	}
	return len(l.ops)
}

// records is the number of calls or spans the load carries.
func (l load) records() int {
	if !l.isOTLP() {
		return len(l.ops)
	}
	n := 0
	for _, s := range l.spans {
		n += s
	}
	return n
}

// slice is units [from, to) of l.
func (l load) slice(from, to int) load {
	if l.isOTLP() {
		return load{otlp: l.otlp[from:to], spans: l.spans[from:to], project: l.project}
	}
	return load{ops: l.ops[from:to]}
}

// joins reports whether other can travel in the same request as l.
func (l load) joins(other load) bool {
	return l.isOTLP() == other.isOTLP() && l.project == other.project
}

func (l *load) add(other load) {
	l.ops = append(l.ops, other.ops...)
	l.otlp = append(l.otlp, other.otlp...)
	l.spans = append(l.spans, other.spans...)
	l.project = other.project
}

// encodeRecord is one acknowledged batch of calls as the buffer stores
// it: version, kind, the API key to forward it under (length-prefixed),
// then the calls in the storage exporter's record form.
func encodeRecord(key string, ops []storage.CallOp) []byte {
	return append(recordHead(kindCalls, key), storageexporter.EncodeRecord(ops)...)
}

// encodeOTLPRecord is one acknowledged OTLP request: version, kind, key,
// its project_id header and span count, then the request compressed.
func encodeOTLPRecord(key, project string, spans int, request []byte) []byte {
	b := recordHead(kindOTLP, key)
	b = binary.AppendUvarint(b, uint64(len(project)))
	b = append(b, project...)
	b = binary.AppendUvarint(b, uint64(spans))
	return append(b, s2.Encode(nil, request)...)
}

func recordHead(kind byte, key string) []byte {
	b := make([]byte, 0, 2+binary.MaxVarintLen64+len(key))
	b = append(b, recordVersion, kind)
	b = binary.AppendUvarint(b, uint64(len(key)))
	return append(b, key...)
}

// decodeRecord reverses encodeRecord and encodeOTLPRecord. The values it
// returns do not alias rec.
func decodeRecord(rec []byte) (key string, l load, err error) {
	if len(rec) < 2 {
		return "", l, fmt.Errorf("%w: too short", errCorrupt)
	}
	if rec[0] != recordVersion {
		return "", l, fmt.Errorf("%w: version %d is not one this release reads", errCorrupt, rec[0])
	}
	r := recordReader{b: rec[2:]}
	key = r.text()
	switch rec[1] {
	case kindCalls:
		if r.err == nil {
			l.ops, r.err = storageexporter.DecodeRecord(r.b)
		}
	case kindOTLP:
		l.project = r.text()
		spans := r.uvarint()
		var body []byte
		if r.err == nil {
			body, r.err = s2.Decode(nil, r.b)
		}
		l.otlp, l.spans = [][]byte{body}, []int{int(min(spans, 1<<31))}
	default:
		return "", l, fmt.Errorf("%w: unknown kind %d", errCorrupt, rec[1])
	}
	if r.err != nil {
		return "", load{}, fmt.Errorf("%w: %w", errCorrupt, r.err)
	}
	return key, l, nil
}

// recordReader reads a record's length-prefixed fields; the first
// failure sticks.
type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("bad length")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) text() string {
	n := r.uvarint()
	if r.err == nil && (n > maxKeyBytes || n > uint64(len(r.b))) {
		r.err = errors.New("bad key or project length")
	}
	if r.err != nil {
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
