// Package digest computes the content digests of the Weave wire protocol:
// object, table-row, table and file digests, byte for byte as the reference
// server and the Weave SDKs compute them, so refs built by a client resolve
// on this server. It owns the Python-json.dumps-compatible encoder those
// digests hash.
//
// This package must never import storage, a backend or any HTTP code: it is
// pure computation over bytes.
package digest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
)

// Len is the length of a bytes digest: 43 characters of [A-Za-z0-9].
const Len = 43

// BytesDigest is the Weave base digest: SHA-256, URL-safe base64 with '-'
// replaced by 'X' and '_' by 'Y', padding stripped.
func BytesDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return encodeSum(sum[:])
}

// StrDigest digests the UTF-8 bytes of s.
func StrDigest(s string) string {
	return BytesDigest([]byte(s))
}

// ObjectDigest is the digest of an object value: the bytes digest of its
// canonical (sorted-keys json.dumps) text.
func ObjectDigest(raw json.RawMessage) (string, error) {
	text, err := Canonical(raw)
	if err != nil {
		return "", err
	}
	return BytesDigest(text), nil
}

// RowDigest is the digest of one table row; the rule is the object rule.
func RowDigest(raw json.RawMessage) (string, error) {
	return ObjectDigest(raw)
}

// EmptyTableDigest is the digest of a table without rows.
const EmptyTableDigest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// TableDigest is the lowercase hex SHA-256 of the row digests concatenated
// in table order. Unlike the other digests it is hex, as the reference
// server computes it.
func TableDigest(rowDigests []string) string {
	h := sha256.New()
	for _, d := range rowDigests {
		_, _ = io.WriteString(h, d) // hash.Hash never fails
	}
	return hex.EncodeToString(h.Sum(nil))
}

// FileDigest streams r into the bytes digest, returning the digest and the
// number of bytes read. File content can be large, so it is never buffered.
func FileDigest(r io.Reader) (string, int64, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", n, fmt.Errorf("read file content for digest: %w", err)
	}
	return encodeSum(h.Sum(nil)), n, nil
}

func encodeSum(sum []byte) string {
	out := make([]byte, base64.RawURLEncoding.EncodedLen(len(sum)))
	base64.RawURLEncoding.Encode(out, sum)
	for i, c := range out {
		switch c {
		case '-':
			out[i] = 'X'
		case '_':
			out[i] = 'Y'
		}
	}
	return string(out)
}
