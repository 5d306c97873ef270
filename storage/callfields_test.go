package storage

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestCallFieldsCoverCall: every field of Call is in CallFields once,
// with a column of its own, and Of points at it.
func TestCallFieldsCoverCall(t *testing.T) {
	var c Call
	base := reflect.ValueOf(&c).Elem()
	byOffset := map[uintptr]string{}
	for i := range base.NumField() {
		byOffset[base.Type().Field(i).Offset] = base.Type().Field(i).Name
	}
	seenField, seenColumn := map[string]bool{}, map[string]bool{}
	for _, f := range CallFields {
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
			t.Errorf("Call.%s is not in CallFields", name)
		}
	}
}

// TestFoldPartBySide: a part overwrites exactly the fields of the sides
// it carries.
func TestFoldPartBySide(t *testing.T) {
	full := func(tag string) Call {
		var c Call
		for i, f := range CallFields {
			n := int64(i)
			at := time.Unix(n, 0)
			s := tag
			switch p := f.Of(&c).(type) {
			case *string:
				*p = tag
			case *time.Time:
				*p = at
			case **time.Time:
				*p = &at
			case *json.RawMessage:
				*p = json.RawMessage(`"` + tag + `"`)
			case **string:
				*p = &s
			case **int64:
				*p = &n
			case *[]string:
				*p = []string{tag}
			default:
				t.Fatalf("%s: kind %T", f.Column, p)
			}
		}
		return c
	}
	for _, kind := range []PartKind{PartStart, PartEnd, PartComplete} {
		dst := CallPart{Kind: PartStart, Call: full("old")}
		src := CallPart{Kind: kind, Call: full("new")}
		FoldPart(&dst, &src)
		for _, f := range CallFields {
			moved := (f.Side == SideStart && kind.HasStart()) || (f.Side == SideEnd && kind.HasEnd())
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
