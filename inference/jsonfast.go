package inference

import (
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// decodeJSON is json.Unmarshal for what every request decodes (its body,
// the upstream's answer): encoding/json/v2's decoder under v1's
// semantics, the same result at about half the CPU.
func decodeJSON(data []byte, v any) error { return jsonv1.Unmarshal(data, v) }

// encodeJSON is json.Marshal for what every traced call encodes: the same
// bytes, from encoding/json/v2's encoder.
func encodeJSON(v any) ([]byte, error) { return jsonv1.Marshal(v) }
