package digest

import (
	"math"
	"strconv"
)

// number re-encodes a JSON number token. Python's json.loads makes a token
// with '.', 'e' or 'E' a float and anything else an int of any size.
func (e *encoder) number(out []byte) ([]byte, error) {
	start := e.pos
	isFloat, err := e.scanNumber()
	if err != nil {
		return nil, err
	}
	tok := e.in[start:e.pos]
	if !isFloat {
		if string(tok) == "-0" {
			return append(out, '0'), nil
		}
		return append(out, tok...), nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil && !math.IsInf(f, 0) {
		return nil, e.fail("number out of range")
	}
	if math.IsInf(f, 0) {
		e.finite = false
	}
	return AppendPyFloat(out, f), nil
}

// scanNumber advances over -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?.
func (e *encoder) scanNumber() (isFloat bool, err error) {
	if e.in[e.pos] == '-' {
		e.pos++
	}
	switch {
	case e.pos < len(e.in) && e.in[e.pos] == '0':
		e.pos++
	case e.digits() == 0:
		return false, e.fail("expected digits in number")
	}
	if e.pos < len(e.in) && e.in[e.pos] == '.' {
		e.pos++
		if e.digits() == 0 {
			return false, e.fail("expected digits after '.'")
		}
		isFloat = true
	}
	if e.pos < len(e.in) && (e.in[e.pos] == 'e' || e.in[e.pos] == 'E') {
		e.pos++
		if e.pos < len(e.in) && (e.in[e.pos] == '+' || e.in[e.pos] == '-') {
			e.pos++
		}
		if e.digits() == 0 {
			return false, e.fail("expected digits in exponent")
		}
		isFloat = true
	}
	return isFloat, nil
}

func (e *encoder) digits() int {
	n := 0
	for e.pos < len(e.in) && e.in[e.pos] >= '0' && e.in[e.pos] <= '9' {
		e.pos++
		n++
	}
	return n
}

// AppendPyFloat appends Python's repr of f: the shortest digits that round
// trip, fixed notation with at least one fractional digit when the decimal
// exponent is in [-4, 16), otherwise d.ddde±XX; NaN and infinities as
// json.dumps prints them.
func AppendPyFloat(out []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(out, "NaN"...)
	case math.IsInf(f, 1):
		return append(out, "Infinity"...)
	case math.IsInf(f, -1):
		return append(out, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(out, "-0.0"...)
		}
		return append(out, "0.0"...)
	}
	var buf [32]byte
	sci := strconv.AppendFloat(buf[:0], math.Abs(f), 'e', -1, 64)
	digits, exp := splitScientific(sci)
	if f < 0 {
		out = append(out, '-')
	}
	if exp >= -4 && exp < 16 {
		return appendFixed(out, digits, exp)
	}
	out = append(out, digits[0])
	if len(digits) > 1 {
		out = append(out, '.')
		out = append(out, digits[1:]...)
	}
	out = append(out, 'e')
	if exp < 0 {
		out = append(out, '-')
		exp = -exp
	} else {
		out = append(out, '+')
	}
	if exp < 10 {
		out = append(out, '0')
	}
	return strconv.AppendInt(out, int64(exp), 10)
}

// splitScientific splits Go's "d.ddde±XX" into its digits and exponent.
func splitScientific(sci []byte) (digits []byte, exp int) {
	mant, expText := sci, []byte(nil)
	for i, c := range sci {
		if c == 'e' {
			mant, expText = sci[:i], sci[i+1:]
			break
		}
	}
	digits = make([]byte, 0, len(mant))
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	exp, _ = strconv.Atoi(string(expText)) // Go always prints a valid exponent
	return digits, exp
}

func appendFixed(out, digits []byte, exp int) []byte {
	if exp < 0 {
		out = append(out, '0', '.')
		for i := -1; i > exp; i-- {
			out = append(out, '0')
		}
		return append(out, digits...)
	}
	intLen := exp + 1
	if len(digits) <= intLen {
		out = append(out, digits...)
		for i := len(digits); i < intLen; i++ {
			out = append(out, '0')
		}
		return append(out, ".0"...)
	}
	out = append(out, digits[:intLen]...)
	out = append(out, '.')
	return append(out, digits[intLen:]...)
}
