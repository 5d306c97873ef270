package wal

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// WriteMark records seq in the file at path, replacing it whole (a
// rename), so a reader sees the old mark or the new one. It does not sync:
// a mark is a point from which records are read again after a restart,
// and a stale one only means some are read twice.
func WriteMark(path string, seq uint64) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.FormatUint(seq, 10)), 0o600); err != nil {
		return fmt.Errorf("wal mark: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("wal mark: %w", err)
	}
	return nil
}

// ReadMark returns the mark at path, or 0 when there is none or it cannot
// be read (everything is then read again).
func ReadMark(path string) uint64 {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil {
		return 0
	}
	return v
}
