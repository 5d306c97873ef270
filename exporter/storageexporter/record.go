package storageexporter

import "github.com/weftdev/weft/storage"

// EncodeRecord returns the write-ahead log's record form of ops: the
// versioned binary codec, S2-compressed. The agent's disk buffer holds
// call records in the same form, so both logs share one format and one
// decoder.
func EncodeRecord(ops []storage.CallOp) []byte {
	return compressRecord(encodeOps(make([]byte, 0, sizeHint(ops)), ops))
}

// DecodeRecord reads a record written by EncodeRecord.
func DecodeRecord(rec []byte) ([]storage.CallOp, error) { return decodeRecord(rec) }

// ValidateOps refuses records no store could hold (text that is not
// valid UTF-8), with storage.ErrInvalidArgument naming the field.
func ValidateOps(ops []storage.CallOp) error { return validateOps(ops) }
