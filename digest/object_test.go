package digest

import (
	"encoding/json"
	"errors"
	"testing"
)

func strp(s string) *string { return &s }

func eqStr(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func TestObjectKindAndClasses(t *testing.T) {
	tests := []struct {
		name       string
		val        string
		kind       string
		leaf, base *string
	}{
		{"plain", `{"temperature": 0.2}`, KindObject, nil, nil},
		{"scalar", `"text"`, KindObject, nil, nil},
		{"list", `[{"_type": "Op"}]`, KindObject, nil, nil},
		{"custom op", `{"_type": "CustomWeaveType", "weave_type": {"type": "Op"}, "files": {"obj.py": "d"}}`, KindOp, nil, nil},
		{"python op", `{"_type": "Op"}`, KindOp, nil, nil},
		{"weave_type wins over _type", `{"_type": "Op", "weave_type": {"type": "Image"}}`, KindObject, nil, nil},
		{"weave_type alone is no type", `{"weave_type": {"type": "Op"}}`, KindObject, nil, nil},
		{"weave object", `{"_type": "PromptTemplate", "_class_name": "PromptTemplate", "_bases": ["Object", "BaseModel"]}`,
			KindObject, strp("PromptTemplate"), strp("PromptTemplate")},
		{"subclass", `{"_class_name": "MyModel", "_bases": ["Model", "Object", "BaseModel"]}`,
			KindObject, strp("MyModel"), strp("Model")},
		{"deep subclass", `{"_class_name": "Leaf", "_bases": ["Mid", "Dataset", "BaseObject", "BaseModel"]}`,
			KindObject, strp("Leaf"), strp("Dataset")},
		{"pydantic only", `{"_class_name": "X", "_bases": ["Thing", "BaseModel"]}`, KindObject, nil, nil},
		{"short bases", `{"_class_name": "X", "_bases": ["BaseModel"]}`, KindObject, nil, nil},
		{"bases not a list", `{"_class_name": "X", "_bases": "Object"}`, KindObject, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Object(json.RawMessage(tt.val), "")
			if err != nil {
				t.Fatal(err)
			}
			if res.Kind != tt.kind || !eqStr(res.LeafObjectClass, tt.leaf) || !eqStr(res.BaseObjectClass, tt.base) {
				t.Fatalf("got kind %s leaf %v base %v", res.Kind, res.LeafObjectClass, res.BaseObjectClass)
			}
			want, err := ObjectDigest(json.RawMessage(tt.val))
			if err != nil || res.Digest != want || string(res.Val) != tt.val {
				t.Fatalf("digest %s val %s, want %s unchanged val (%v)", res.Digest, res.Val, want, err)
			}
		})
	}
}

func TestObjectRejects(t *testing.T) {
	tests := []struct {
		name, val, builtin string
		want               error
	}{
		{"missing class name", `{"_bases": ["Object", "BaseModel"]}`, "", ErrInvalidObject},
		{"non-string base", `{"_class_name": "A", "_bases": [1, "Object", "BaseModel"]}`, "", ErrInvalidObject},
		{"absolute file", `{"_type": "CustomWeaveType", "files": {"/etc/passwd": "d"}}`, "", ErrInvalidObject},
		{"parent file", `{"x": [{"_type": "CustomWeaveType", "files": {"a/../../b": "d"}}]}`, "", ErrInvalidObject},
		{"escaped marker", `{"_type": "CustomWeave\u0054ype", "files": {"../b": "d"}}`, "", ErrInvalidObject},
		{"builtin on list", `[1]`, "Leaderboard", ErrInvalidObject},
		{"builtin mismatch", `{"_class_name": "A", "_bases": ["BaseObject", "BaseModel"]}`, "Leaderboard", ErrInvalidObject},
		{"unknown builtin", `{"name": "x"}`, "NoSuchClass", ErrInvalidObject},
		{"bad json", `{"a": }`, "", ErrInvalidJSON},
	}
	for _, tt := range tests {
		if _, err := Object(json.RawMessage(tt.val), tt.builtin); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
	if _, err := Object(json.RawMessage(`{"_type": "CustomWeaveType", "files": {"a/../b.py": "d"}}`), ""); err != nil {
		t.Errorf("a path that stays inside is allowed: %v", err)
	}
}

func TestObjectBuiltinClass(t *testing.T) {
	res, err := Object(json.RawMessage(`{"name": "board", "columns": []}`), "Leaderboard")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_bases": ["BaseObject", "BaseModel"], "_class_name": "Leaderboard", "_type": "Leaderboard", "columns": [], "description": null, "name": "board"}`
	if string(res.Text) != want {
		t.Fatalf("text = %s\nwant   %s", res.Text, want)
	}
	if res.Digest != StrDigest(want) || *res.LeafObjectClass != "Leaderboard" || *res.BaseObjectClass != "Leaderboard" {
		t.Fatalf("got %+v", res)
	}
	same, err := Object(res.Val, "Leaderboard")
	if err != nil || same.Digest != res.Digest {
		t.Fatalf("re-creating the normalised value changed it: %v %v", same.Digest, err)
	}
}
