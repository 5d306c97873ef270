package storage_test

import (
	"reflect"
	"testing"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/conformance"
)

// TestCallFieldsCoverCall: every field of Call is in storage.CallFields once,
// with a column of its own, and Of points at it.
func TestCallFieldsCoverCall(t *testing.T) {
	var c storage.Call
	base := reflect.ValueOf(&c).Elem()
	byOffset := map[uintptr]string{}
	for i := range base.NumField() {
		byOffset[base.Type().Field(i).Offset] = base.Type().Field(i).Name
	}
	seenField, seenColumn := map[string]bool{}, map[string]bool{}
	for _, f := range storage.CallFields {
		ptr := reflect.ValueOf(f.Of(&c))
		off := ptr.Pointer() - base.Addr().Pointer()
		name, ok := byOffset[off]
		if !ok {
			t.Fatalf("%s points outside Call's fields", f.Column)
		}
		if seenField[name] || seenColumn[f.Column] {
			t.Fatalf("%s (%s) listed twice", f.Column, name)
		}
		seenField[name], seenColumn[f.Column] = true, true
		if ptr.Elem().Type() != base.FieldByName(name).Type() {
			t.Fatalf("%s: Of returns %s for %s", f.Column, ptr.Type(), name)
		}
	}
	for i := range base.NumField() {
		if name := base.Type().Field(i).Name; !seenField[name] {
			t.Errorf("Call.%s is not in storage.CallFields", name)
		}
	}
}

// TestFoldPartBySide: a part overwrites exactly the fields of the sides
// it carries.
func TestFoldPartBySide(t *testing.T) {
	full := func(tag string) storage.Call {
		return conformance.EveryField("e/p", "c", tag, storage.SideStart, storage.SideEnd, storage.SideDelete)
	}
	for _, kind := range []storage.PartKind{storage.PartStart, storage.PartEnd, storage.PartComplete} {
		dst := storage.CallPart{Kind: storage.PartStart, Call: full("old")}
		src := storage.CallPart{Kind: kind, Call: full("new")}
		storage.FoldPart(&dst, &src)
		for _, f := range storage.CallFields {
			moved := (f.Side == storage.SideStart && kind.HasStart()) || (f.Side == storage.SideEnd && kind.HasEnd())
			old, updated := full("old"), full("new")
			want := f.Of(&old)
			if moved {
				want = f.Of(&updated)
			}
			if got := f.Of(&dst.Call); !reflect.DeepEqual(got, want) {
				t.Errorf("%s part, %s: got %v", kind, f.Column, reflect.ValueOf(got).Elem())
			}
		}
	}
}
