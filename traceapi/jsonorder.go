package traceapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// jsonObject is a decoded JSON object that keeps its members in the order
// they were written, so a value rewritten by expand_columns reads back
// with the keys the SDK sent, in that order (a Go map would sort them).
type jsonObject struct {
	keys []string
	vals map[string]any
}

func (o *jsonObject) get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

func (o *jsonObject) set(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// MarshalJSON writes the members in their order.
func (o *jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		val, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// decodeOrdered decodes one JSON value: objects as *jsonObject, arrays as
// []any, numbers as json.Number (kept exactly), the rest as
// encoding/json does.
func decodeOrdered(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return decodeArray(dec)
		}
		if t == '{' {
			return decodeObject(dec)
		}
		return nil, fmt.Errorf("unexpected %q", t)
	default:
		return t, nil
	}
}

func decodeArray(dec *json.Decoder) (any, error) {
	arr := []any{}
	for dec.More() {
		v, err := decodeValue(dec)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
	}
	_, err := dec.Token() // ']'
	return arr, err
}

func decodeObject(dec *json.Decoder) (any, error) {
	obj := &jsonObject{vals: map[string]any{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key %v is not a string", tok)
		}
		v, err := decodeValue(dec)
		if err != nil {
			return nil, err
		}
		obj.set(key, v)
	}
	_, err := dec.Token() // '}'
	return obj, err
}
