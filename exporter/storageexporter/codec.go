package storageexporter

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/weftdev/weft/storage"
)

// The write-ahead log holds each exported batch as one record in a compact
// binary form: a version byte, the op count, then each op as a kind byte
// and its fields, length-prefixed. Optional values carry a presence flag so
// that nil and empty survive the trip (a nil Output is JSON null; an empty
// InputRefs is not the same as none).
const codecVersion = 1

const (
	opPart byte = iota + 1
	opUpdate
	opDelete
)

var errCorrupt = errors.New("corrupt write-ahead log record")

// encodeOps appends the record form of ops to b.
func encodeOps(b []byte, ops []storage.CallOp) []byte {
	e := encoder{b: b}
	e.b = append(e.b, codecVersion)
	e.uvarint(uint64(len(ops)))
	for _, op := range ops {
		switch {
		case op.Part != nil:
			e.b = append(e.b, opPart, byte(op.Part.Kind))
			e.call(&op.Part.Call)
		case op.Update != nil:
			u := op.Update
			e.b = append(e.b, opUpdate)
			e.str(u.ProjectID, u.ID, u.DisplayName, u.WBUserID)
		case op.Delete != nil:
			d := op.Delete
			e.b = append(e.b, opDelete)
			e.str(d.ProjectID, d.WBUserID)
			e.list(d.IDs)
			e.time(d.At)
		}
	}
	return e.b
}

type encoder struct{ b []byte }

func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

func (e *encoder) str(ss ...string) {
	for _, s := range ss {
		e.uvarint(uint64(len(s)))
		e.b = append(e.b, s...)
	}
}

// raw writes nil as 0 and anything else as its length plus one.
func (e *encoder) raw(r []byte) {
	if r == nil {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(len(r)) + 1)
	e.b = append(e.b, r...)
}

func (e *encoder) list(l []string) {
	if l == nil {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(len(l)) + 1)
	e.str(l...)
}

func (e *encoder) time(t time.Time) {
	if t.IsZero() {
		e.b = append(e.b, 0)
		return
	}
	e.b = append(e.b, 1)
	e.b = binary.AppendVarint(e.b, t.UnixNano())
}

func (e *encoder) timePtr(t *time.Time) {
	if t == nil {
		e.b = append(e.b, 2)
		return
	}
	e.time(*t)
}

func (e *encoder) intPtr(v *int64) {
	if v == nil {
		e.b = append(e.b, 0)
		return
	}
	e.b = append(e.b, 1)
	e.b = binary.AppendVarint(e.b, *v)
}

// call writes c's fields in storage.CallFields order.
func (e *encoder) call(c *storage.Call) {
	for _, f := range storage.CallFields {
		switch v := f.Of(c).(type) {
		case *string:
			e.str(*v)
		case *time.Time:
			e.time(*v)
		case **time.Time:
			e.timePtr(*v)
		case *json.RawMessage:
			e.raw(*v)
		case **string:
			if *v == nil {
				e.raw(nil)
			} else {
				e.raw([]byte(**v))
			}
		case **int64:
			e.intPtr(*v)
		case *[]string:
			e.list(*v)
		default:
			panic(fmt.Sprintf("storageexporter: call field %s of type %T", f.Column, v))
		}
	}
}

// sizeHint is about the encoded size of ops, so the record buffer is
// allocated once instead of grown through copies.
func sizeHint(ops []storage.CallOp) int {
	n := 16
	for _, op := range ops {
		n += 96
		if p := op.Part; p != nil {
			for _, f := range storage.CallFields {
				n += storage.FieldSize(f.Of(&p.Call))
			}
		}
		if d := op.Delete; d != nil {
			for _, id := range d.IDs {
				n += len(id) + 2
			}
		}
	}
	return n
}

// compressRecord S2-compresses an encoded batch for the log: call JSON
// shrinks two to three times, and the log's disk bandwidth is what it
// competes for with the store.
func compressRecord(rec []byte) []byte { return s2.Encode(nil, rec) }

// decodeRecord reverses compressRecord and encodeOps.
func decodeRecord(rec []byte) ([]storage.CallOp, error) {
	raw, err := s2.Decode(nil, rec)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errCorrupt, err)
	}
	return decodeOps(raw)
}

// decodeOps reads a record written by encodeOps. The values it returns do
// not alias b.
func decodeOps(b []byte) ([]storage.CallOp, error) {
	d := decoder{b: b}
	if v := d.byte(); v != codecVersion {
		return nil, fmt.Errorf("%w: version %d", errCorrupt, v)
	}
	n := d.count()
	ops := make([]storage.CallOp, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		ops = append(ops, d.op())
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return ops, nil
}

func (d *decoder) op() storage.CallOp {
	switch kind := d.byte(); kind {
	case opPart:
		p := &storage.CallPart{Kind: storage.PartKind(d.byte())}
		d.call(&p.Call)
		if p.Kind == 0 || p.Kind > storage.PartComplete {
			d.fail("part kind")
		}
		return storage.CallOp{Part: p}
	case opUpdate:
		u := &storage.CallUpdate{ProjectID: d.str(), ID: d.str(), DisplayName: d.str(), WBUserID: d.str()}
		return storage.CallOp{Update: u}
	case opDelete:
		del := &storage.CallDelete{ProjectID: d.str(), WBUserID: d.str()}
		del.IDs = d.list()
		del.At = d.time()
		return storage.CallOp{Delete: del}
	default:
		d.fail("op kind")
		return storage.CallOp{}
	}
}

// call reads the fields encoder.call wrote.
func (d *decoder) call(c *storage.Call) {
	for _, f := range storage.CallFields {
		switch v := f.Of(c).(type) {
		case *string:
			*v = d.str()
		case *time.Time:
			*v = d.time()
		case **time.Time:
			*v = d.timePtr()
		case *json.RawMessage:
			*v = d.raw()
		case **string:
			if exc := d.raw(); exc != nil {
				s := string(exc)
				*v = &s
			}
		case **int64:
			*v = d.intPtr()
		case *[]string:
			*v = d.list()
		default:
			panic(fmt.Sprintf("storageexporter: call field %s of type %T", f.Column, v))
		}
	}
}
