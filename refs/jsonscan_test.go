package refs

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestObjectMember(t *testing.T) {
	const doc = ` { "a" : 1, "b": {"c": [1, {"d": "}]"}]}, "e\"q": "x", "dup": 1, "dup": [2], "caf\u00e9": true, "n": null } `
	tests := []struct {
		key, want string
		ok        bool
	}{
		{"a", `1`, true},
		{"b", `{"c": [1, {"d": "}]"}]}`, true},
		{`e"q`, `"x"`, true},
		{"dup", `[2]`, true},
		{"café", `true`, true},
		{"n", `null`, true},
		{"zz", ``, false},
	}
	for _, tt := range tests {
		got, ok := ObjectMember(json.RawMessage(doc), tt.key)
		if string(got) != tt.want || ok != tt.ok {
			t.Errorf("ObjectMember(%q) = %s, %v; want %s, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
	for _, notObject := range []string{`[1]`, `"a"`, ``, `{"a" 1}`} {
		if _, ok := ObjectMember(json.RawMessage(notObject), "a"); ok {
			t.Errorf("ObjectMember(%s) found a member", notObject)
		}
	}
}

func TestArrayElements(t *testing.T) {
	elems, ok := ArrayElements(json.RawMessage(` [1, "a,]", {"b": [2, 3]}, [], -1.5e3 , null] `))
	want := []string{`1`, `"a,]"`, `{"b": [2, 3]}`, `[]`, `-1.5e3`, `null`}
	if !ok || len(elems) != len(want) {
		t.Fatalf("ArrayElements = %q, %v", elems, ok)
	}
	for i := range want {
		if string(elems[i]) != want[i] {
			t.Errorf("element %d = %s, want %s", i, elems[i], want[i])
		}
	}
	if elems, ok := ArrayElements(json.RawMessage(`[]`)); !ok || len(elems) != 0 {
		t.Errorf("empty array = %q, %v", elems, ok)
	}
	if _, ok := ArrayElements(json.RawMessage(`{"a": 1}`)); ok {
		t.Error("an object is no array")
	}
}

// FuzzJSONScan checks the scanner against encoding/json on valid JSON.
func FuzzJSONScan(f *testing.F) {
	f.Add([]byte(`{"a": [1, {"b": "]}"}], "a": "last", "c\u0041": null}`), "a")
	f.Add([]byte(`[1, "two", [3], {"4": 4}]`), "4")
	f.Fuzz(func(t *testing.T, raw []byte, key string) {
		if !json.Valid(raw) {
			ObjectMember(raw, key) // must not panic
			ArrayElements(raw)
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil {
			got, ok := ObjectMember(raw, key)
			want, wantOK := m[key]
			if ok != wantOK || !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
				t.Fatalf("ObjectMember(%s, %q) = %s %v, want %s %v", raw, key, got, ok, want, wantOK)
			}
		}
		var l []json.RawMessage
		if json.Unmarshal(raw, &l) == nil {
			got, ok := ArrayElements(raw)
			if !ok || len(got) != len(l) {
				t.Fatalf("ArrayElements(%s) = %q, want %q", raw, got, l)
			}
			for i := range l {
				if !bytes.Equal(bytes.TrimSpace(got[i]), bytes.TrimSpace(l[i])) {
					t.Fatalf("element %d = %s, want %s", i, got[i], l[i])
				}
			}
		}
	})
}
