package digest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// ErrInvalidObject is wrapped by errors for object values the reference
// server refuses: class markers that contradict the request, unknown
// builtin classes, unsafe file names.
var ErrInvalidObject = errors.New("invalid object value")

// Object kinds, as ObjSchema.kind spells them.
const (
	KindObject = "object"
	KindOp     = "op"
)

// builtinClasses are the classes the reference registry validates when a
// request names builtin_object_class. Their pydantic defaults are not
// reproducible here, so values are normalised by the class markers and
// the BaseObject fields only.
var builtinClasses = []string{
	"Leaderboard", "AlertSpec", "AnnotationSpec", "Provider", "ProviderModel", "SavedView",
	"ComparisonView", "LLMStructuredCompletionModel", "ChartConfig",
	"TestOnlyExample", "TestOnlyNestedBaseObject", "TestOnlyInheritedBaseObject",
}

// ObjectResult is everything /obj/create derives from a value.
type ObjectResult struct {
	Val             json.RawMessage // the value after builtin-class normalisation
	Text            []byte          // canonical text, the hashed bytes
	Finite          bool            // see Dump.Finite
	Digest          string
	Kind            string // KindOp or KindObject
	BaseObjectClass *string
	LeafObjectClass *string
}

// Object computes the digest, kind and classes of an object value, as the
// reference compute_object_digest_result does. builtinClass is the
// request's builtin_object_class ("" when absent).
func Object(val json.RawMessage, builtinClass string) (ObjectResult, error) {
	var members map[string]json.RawMessage
	isDict := bytes.HasPrefix(bytes.TrimSpace(val), []byte("{"))
	if isDict {
		if err := json.Unmarshal(val, &members); err != nil {
			return ObjectResult{}, fmt.Errorf("%w: %s", ErrInvalidJSON, err.Error())
		}
	} else if builtinClass != "" {
		return ObjectResult{}, fmt.Errorf("%w: builtin_object_class needs a JSON object val", ErrInvalidObject)
	}
	res := ObjectResult{Val: val}
	if err := checkFileKeys(val); err != nil {
		return res, err
	}
	var err error
	if isDict {
		if res.Val, members, err = normaliseBuiltin(val, members, builtinClass); err != nil {
			return res, err
		}
		if res.LeafObjectClass, res.BaseObjectClass, err = objectClasses(members); err != nil {
			return res, err
		}
		res.Kind = kindOf(members)
	} else {
		res.Kind = KindObject
	}
	d, err := Dumps(res.Val, Options{SortKeys: true})
	if err != nil {
		return res, err
	}
	res.Text, res.Finite, res.Digest = d.Text, d.Finite, BytesDigest(d.Text)
	return res, nil
}

// kindOf reads the value's type as the reference does: weave_type.type
// when both _type and weave_type exist, else _type. "Op" makes an op.
func kindOf(m map[string]json.RawMessage) string {
	rawType, ok := m["_type"]
	if !ok {
		return KindObject
	}
	if wt, ok := m["weave_type"]; ok {
		var inner struct {
			Type json.RawMessage `json:"type"`
		}
		if json.Unmarshal(wt, &inner) != nil {
			return KindObject
		}
		rawType = inner.Type
	}
	var t string
	if json.Unmarshal(rawType, &t) == nil && t == "Op" {
		return KindOp
	}
	return KindObject
}

// objectClasses detects weave.Object / BaseObject subclasses: _bases ends
// with [..., "Object"|"BaseObject", "BaseModel"]; the leaf is _class_name
// and the base the class right above Object, or the leaf itself.
func objectClasses(m map[string]json.RawMessage) (leaf, base *string, err error) {
	var bases []json.RawMessage
	if raw, ok := m["_bases"]; !ok || json.Unmarshal(raw, &bases) != nil || len(bases) < 2 {
		return nil, nil, nil
	}
	last, root := jsonString(bases[len(bases)-1]), jsonString(bases[len(bases)-2])
	if last == nil || *last != "BaseModel" || root == nil || (*root != "Object" && *root != "BaseObject") {
		return nil, nil, nil
	}
	if leaf = jsonString(m["_class_name"]); leaf == nil {
		return nil, nil, fmt.Errorf("%w: _bases marks a weave Object, so _class_name must be a string", ErrInvalidObject)
	}
	if len(bases) == 2 {
		return leaf, leaf, nil
	}
	if base = jsonString(bases[len(bases)-3]); base == nil {
		return nil, nil, fmt.Errorf("%w: every _bases entry must be a string", ErrInvalidObject)
	}
	return leaf, base, nil
}

// jsonString decodes a JSON string; anything else gives nil.
func jsonString(raw json.RawMessage) *string {
	var s string
	if raw == nil || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return &s
}

func normaliseBuiltin(val json.RawMessage, m map[string]json.RawMessage, class string) (json.RawMessage, map[string]json.RawMessage, error) {
	if class == "" {
		return val, m, nil
	}
	if leaf, _, err := objectClasses(m); err != nil || leaf != nil {
		if err == nil && *leaf != class {
			err = fmt.Errorf("%w: builtin_object_class %q does not match the value's _class_name %q", ErrInvalidObject, class, *leaf)
		}
		return val, m, err
	}
	if !slices.Contains(builtinClasses, class) {
		return nil, nil, fmt.Errorf("%w: unknown builtin_object_class %q; use one of %s",
			ErrInvalidObject, class, strings.Join(builtinClasses, ", "))
	}
	name, _ := json.Marshal(class)
	m["_type"], m["_class_name"] = name, name
	m["_bases"] = json.RawMessage(`["BaseObject", "BaseModel"]`)
	for _, field := range []string{"name", "description"} {
		if _, ok := m[field]; !ok {
			m[field] = json.RawMessage("null")
		}
	}
	out, err := json.Marshal(m)
	return out, m, err
}

// checkFileKeys refuses absolute or parent-relative file names inside any
// CustomWeaveType value, which the reference rejects before hashing.
func checkFileKeys(val json.RawMessage) error {
	if !bytes.Contains(val, []byte("CustomWeaveType")) && !bytes.Contains(val, []byte(`\u`)) {
		return nil
	}
	var v any
	if err := json.Unmarshal(val, &v); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidJSON, err.Error())
	}
	return walkFileKeys(v)
}

func walkFileKeys(v any) error {
	switch x := v.(type) {
	case map[string]any:
		if x["_type"] == "CustomWeaveType" {
			files, _ := x["files"].(map[string]any)
			for name := range files {
				if strings.HasPrefix(name, "/") || slices.Contains(strings.Split(path.Clean(name), "/"), "..") {
					return fmt.Errorf("%w: file name %q in files must be relative and stay inside the object", ErrInvalidObject, name)
				}
			}
		}
		for _, child := range x {
			if err := walkFileKeys(child); err != nil {
				return err
			}
		}
	case []any:
		for _, child := range x {
			if err := walkFileKeys(child); err != nil {
				return err
			}
		}
	}
	return nil
}
