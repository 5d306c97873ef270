package querylang

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Encode renders e as a Query document {"$expr": ...} in wire form. Parse
// of the result yields an Expr equal to e: floats always carry a fraction
// or exponent so they do not come back as integers.
func Encode(e Expr) (json.RawMessage, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"$expr":`)
	if err := encodeExpr(&buf, e); err != nil {
		return nil, err
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// EncodeOperand renders one operand in wire form.
func EncodeOperand(e Expr) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := encodeExpr(&buf, e); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func encodeExpr(buf *bytes.Buffer, e Expr) error {
	switch n := e.(type) {
	case *And:
		return encodeList(buf, "$and", n.Operands)
	case *Or:
		return encodeList(buf, "$or", n.Operands)
	case *Not:
		return encodeList(buf, "$not", []Expr{n.Operand})
	case *Compare:
		return encodeList(buf, string(n.Op), []Expr{n.Left, n.Right})
	case *In:
		return encodeIn(buf, n)
	case *Contains:
		return encodeContains(buf, "$contains", n.Input, n.Substr, n.CaseInsensitive)
	case *ContainsToken:
		return encodeContains(buf, "$containsToken", n.Input, n.Substr, n.CaseInsensitive)
	case *GetField:
		buf.WriteString(`{"$getField":`)
		writeString(buf, n.Path)
		buf.WriteByte('}')
		return nil
	case *Literal:
		buf.WriteString(`{"$literal":`)
		if err := encodeValue(buf, n.Value); err != nil {
			return err
		}
		buf.WriteByte('}')
		return nil
	case *Convert:
		buf.WriteString(`{"$convert":{"input":`)
		if err := encodeExpr(buf, n.Input); err != nil {
			return err
		}
		buf.WriteString(`,"to":`)
		writeString(buf, string(n.To))
		buf.WriteString(`}}`)
		return nil
	}
	return fmt.Errorf("querylang: cannot encode node %T", e)
}

func encodeList(buf *bytes.Buffer, key string, ops []Expr) error {
	buf.WriteString(`{"` + key + `":`)
	if err := encodeArray(buf, ops); err != nil {
		return err
	}
	buf.WriteByte('}')
	return nil
}

func encodeArray(buf *bytes.Buffer, ops []Expr) error {
	buf.WriteByte('[')
	for i, op := range ops {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := encodeExpr(buf, op); err != nil {
			return err
		}
	}
	buf.WriteByte(']')
	return nil
}

func encodeIn(buf *bytes.Buffer, n *In) error {
	buf.WriteString(`{"$in":[`)
	if err := encodeExpr(buf, n.Operand); err != nil {
		return err
	}
	buf.WriteByte(',')
	if err := encodeArray(buf, n.List); err != nil {
		return err
	}
	buf.WriteString(`]}`)
	return nil
}

func encodeContains(buf *bytes.Buffer, key string, input, substr Expr, ci bool) error {
	buf.WriteString(`{"` + key + `":{"input":`)
	if err := encodeExpr(buf, input); err != nil {
		return err
	}
	buf.WriteString(`,"substr":`)
	if err := encodeExpr(buf, substr); err != nil {
		return err
	}
	buf.WriteString(`,"case_insensitive":` + strconv.FormatBool(ci) + `}}`)
	return nil
}

// encodeValue writes a literal value; container elements are wrapped in
// {"$literal": ...} as the wire model requires.
func encodeValue(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(x))
	case int64:
		buf.WriteString(strconv.FormatInt(x, 10))
	case float64:
		return encodeFloat(buf, x)
	case string:
		writeString(buf, x)
	case []any:
		buf.WriteByte('[')
		for i, item := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encodeExpr(buf, &Literal{Value: item}); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case map[string]any:
		return encodeMap(buf, x)
	default:
		return fmt.Errorf("querylang: literal of type %T cannot be encoded", v)
	}
	return nil
}

func encodeFloat(buf *bytes.Buffer, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("querylang: literal %v has no JSON form", f)
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	buf.WriteString(s)
	return nil
}

func encodeMap(buf *bytes.Buffer, m map[string]any) error {
	buf.WriteByte('{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(buf, k)
		buf.WriteByte(':')
		if err := encodeExpr(buf, &Literal{Value: m[k]}); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a Go string always marshals
	buf.Write(b)
}
