package forwardexporter

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/weftdev/weft/exporter/storageexporter"
	"github.com/weftdev/weft/storage"
)

// recordVersion is the first byte of every buffer record. The buffer
// outlives the binary that wrote it (an upgrade with a backlog), so a new
// layout takes a new version and readers keep reading the old one.
const recordVersion = 1

// maxKeyBytes bounds a stored API key; real keys are under 100 bytes.
const maxKeyBytes = 4096

// errCorrupt marks a record that cannot be read back.
var errCorrupt = errors.New("corrupt buffer record")

// encodeRecord is one acknowledged batch as the buffer stores it: the
// version, the API key to forward it under (length-prefixed), then the
// calls in the storage exporter's record form.
func encodeRecord(key string, ops []storage.CallOp) []byte {
	calls := storageexporter.EncodeRecord(ops)
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(key)+len(calls))
	b = append(b, recordVersion)
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	return append(b, calls...)
}

// decodeRecord reverses encodeRecord. The values it returns do not alias
// rec.
func decodeRecord(rec []byte) (key string, ops []storage.CallOp, err error) {
	if len(rec) == 0 {
		return "", nil, fmt.Errorf("%w: empty", errCorrupt)
	}
	if rec[0] != recordVersion {
		return "", nil, fmt.Errorf("%w: version %d is not one this release reads", errCorrupt, rec[0])
	}
	n, used := binary.Uvarint(rec[1:])
	if used <= 0 || n > maxKeyBytes || n > uint64(len(rec)-1-used) {
		return "", nil, fmt.Errorf("%w: bad key length", errCorrupt)
	}
	start := 1 + used
	key = string(rec[start : start+int(n)])
	ops, err = storageexporter.DecodeRecord(rec[start+int(n):])
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", errCorrupt, err)
	}
	return key, ops, nil
}
