package app_test

import (
	"encoding/json"
	"testing"
)

func TestExpandColumnsResolvesRefs(t *testing.T) {
	e := newEnv(t)
	var created struct {
		Digest string `json:"digest"`
	}
	e.ok("/obj/create", map[string]any{"obj": map[string]any{"project_id": "acme/app", "object_id": "model",
		"val": map[string]any{"name": "gpt", "temperature": 0.2}}}, &created)
	ref := "weave:///acme/app/object/model:" + created.Digest
	s := startBody("c1", "", "predict", "2025-01-01T00:00:00Z")
	s["inputs"] = map[string]any{"model": ref, "q": "hi"}
	e.ok("/call/start", map[string]any{"start": s}, nil)

	read := func(body map[string]any) map[string]any {
		var out struct {
			Calls []struct {
				Inputs map[string]any `json:"inputs"`
			} `json:"calls"`
		}
		e.ok("/calls/query", body, &out)
		if len(out.Calls) != 1 {
			t.Fatalf("got %d calls", len(out.Calls))
		}
		return out.Calls[0].Inputs
	}
	in := read(map[string]any{"project_id": "acme/app", "expand_columns": []string{"inputs.model"}})
	model, ok := in["model"].(map[string]any)
	if !ok || model["name"] != "gpt" || model["_ref"] != ref {
		raw, _ := json.Marshal(in)
		t.Fatalf("inputs.model not expanded: %s", raw)
	}
	in = read(map[string]any{"project_id": "acme/app", "expand_columns": []string{"inputs.model"}, "return_expanded_column_values": false})
	if in["model"] != ref {
		t.Fatalf("return_expanded_column_values=false still expanded: %v", in["model"])
	}
	in = read(map[string]any{"project_id": "acme/app"})
	if in["model"] != ref || in["q"] != "hi" {
		t.Fatalf("without expand_columns: %v", in)
	}
}

// An expanded ref reads back with the object's keys in the order they were
// published, inside inputs that keep their own order.
func TestExpandColumnsKeepsKeyOrder(t *testing.T) {
	e := newEnv(t)
	var created struct {
		Digest string `json:"digest"`
	}
	e.ok("/obj/create", `{"obj":{"project_id":"acme/app","object_id":"cfg","val":{"temperature":0.2,"model":"m","tags":["a"]}}}`, &created)
	ref := "weave:///acme/app/object/cfg:" + created.Digest
	e.ok("/call/start", `{"start":{"project_id":"acme/app","id":"c1","trace_id":"t1","op_name":"predict","started_at":"2025-01-01T00:00:00Z",`+
		`"attributes":{},"inputs":{"zeta":1,"cfg":"`+ref+`","alpha":2}}}`, nil)
	var out struct {
		Calls []struct {
			Inputs json.RawMessage `json:"inputs"`
		} `json:"calls"`
	}
	e.ok("/calls/query", map[string]any{"project_id": "acme/app", "expand_columns": []string{"inputs.cfg"}}, &out)
	if len(out.Calls) != 1 {
		t.Fatalf("got %d calls", len(out.Calls))
	}
	want := `{"zeta":1,"cfg":{"temperature":0.2,"model":"m","tags":["a"],"_ref":"` + ref + `"},"alpha":2}`
	if got := string(out.Calls[0].Inputs); got != want {
		t.Fatalf("expanded inputs\n got %s\nwant %s", got, want)
	}
}
