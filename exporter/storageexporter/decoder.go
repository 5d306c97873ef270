package storageexporter

import (
	"encoding/binary"
	"fmt"
	"time"
)

// decoder reads the codec's primitives; the first failure sticks and every
// later read returns a zero value.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: bad %s", errCorrupt, what)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail("length")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length that must fit in what is left (each item takes at
// least one byte), so a corrupt count cannot allocate without bound.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("count")
		return 0
	}
	return int(n)
}

func (d *decoder) bytes(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.fail("length")
		return nil
	}
	out := make([]byte, n)
	copy(out, d.b[:n])
	d.b = d.b[n:]
	return out
}

func (d *decoder) str() string { return string(d.bytes(d.uvarint())) }

func (d *decoder) raw() []byte {
	n := d.uvarint()
	if n == 0 {
		return nil
	}
	return d.bytes(n - 1)
}

func (d *decoder) list() []string {
	n := d.uvarint()
	if n == 0 {
		return nil
	}
	if n-1 > uint64(len(d.b)) {
		d.fail("list length")
		return nil
	}
	out := make([]string, n-1)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *decoder) time() time.Time {
	switch d.byte() {
	case 0:
		return time.Time{}
	case 1:
		return time.Unix(0, d.varint()).UTC()
	}
	d.fail("time flag")
	return time.Time{}
}

func (d *decoder) timePtr() *time.Time {
	if len(d.b) > 0 && d.b[0] == 2 {
		d.b = d.b[1:]
		return nil
	}
	t := d.time()
	return &t
}

func (d *decoder) intPtr() *int64 {
	switch d.byte() {
	case 0:
		return nil
	case 1:
		v := d.varint()
		return &v
	}
	d.fail("int flag")
	return nil
}
