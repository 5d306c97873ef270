package traceapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/weftdev/weft/auth"
)

func TestV2Objects(t *testing.T) {
	forEachBackend(t, map[string]func(t *testing.T, e *v2Env){
		"ops":              testV2Ops,
		"op paging":        testV2OpPaging,
		"datasets":         testV2Datasets,
		"scorers":          testV2Scorers,
		"evaluations":      testV2Evaluations,
		"models":           testV2Models,
		"kinds stay apart": testV2KindsApart,
		"bad requests":     testV2BadRequests,
		"project scoping":  testV2ProjectScoping,
	})
}

// opJSON is OpReadRes.
type opJSON struct {
	ObjectID     string `json:"object_id"`
	Digest       string `json:"digest"`
	VersionIndex int64  `json:"version_index"`
	CreatedAt    string `json:"created_at"`
	Code         string `json:"code"`
}

func testV2Ops(t *testing.T, e *v2Env) {
	const p = "acme/ops"
	src0, src1 := "def my_func(x):\n    return x * 2\n", "def my_func(x):\n    return 'café 🚀' * x\n"
	v0 := e.create(p, "ops", map[string]any{"name": "My Func", "source_code": src0})
	again := e.create(p, "ops", map[string]any{"name": "My Func", "source_code": src0})
	v1 := e.create(p, "ops", map[string]any{"name": "My Func", "source_code": src1})
	if v0.ObjectID != "my_func" || v0.VersionIndex != 0 || again != v0 || v1.VersionIndex != 1 || v1.Digest == v0.Digest {
		t.Fatalf("creates answered %+v, %+v, %+v; want my_func v0 twice (same digest), then v1", v0, again, v1)
	}
	for _, c := range []struct {
		created v2Created
		code    string
	}{{v0, src0}, {v1, src1}} {
		var op opJSON
		e.ok("GET", "/v2/"+p+"/ops/my_func/versions/"+c.created.Digest, nil, &op)
		if op.Code != c.code || op.VersionIndex != c.created.VersionIndex || op.Digest != c.created.Digest || !wireTime.MatchString(op.CreatedAt) {
			t.Errorf("read v%d = %+v; want code %q", c.created.VersionIndex, op, c.code)
		}
	}
	// The existing objects API sees the op as the SDK stores one.
	obj := e.readObj(p, "my_func", v1.Digest)
	var val struct {
		Type      string            `json:"_type"`
		WeaveType map[string]string `json:"weave_type"`
		Files     map[string]string `json:"files"`
	}
	if err := json.Unmarshal(obj.Val, &val); err != nil || obj.Kind != "op" || val.Type != "CustomWeaveType" ||
		val.WeaveType["type"] != "Op" || len(val.Files["obj.py"]) == 0 {
		t.Errorf("/obj/read = kind %s val %s", obj.Kind, obj.Val)
	}
	if obj.WBUserID == nil || *obj.WBUserID != e.caller.UserID {
		t.Errorf("wb_user_id = %v; want the caller", obj.WBUserID)
	}
	var ops struct{ Objs []objJSON }
	e.ok("POST", "/objs/query", map[string]any{"project_id": p, "filter": map[string]any{"is_op": true}}, &ops)
	if len(ops.Objs) != 2 {
		t.Errorf("/objs/query is_op found %d versions; want 2", len(ops.Objs))
	}

	anon := e.create(p, "ops", map[string]any{})
	var placeholder opJSON
	e.ok("GET", "/v2/"+p+"/ops/Op/versions/"+anon.Digest, nil, &placeholder)
	if anon.ObjectID != "Op" || !strings.Contains(placeholder.Code, "def ") {
		t.Errorf("op without name or code = %+v, code %q", anon, placeholder.Code)
	}
	if got, want := e.versions("/v2/"+p+"/ops"), []string{"Op:v0", "my_func:v1", "my_func:v0"}; !slices.Equal(got, want) {
		t.Errorf("list = %v; want %v (by object_id, newest first)", got, want)
	}
	if lines := e.list("/v2/" + p + "/ops"); lines[1]["code"] != src1 {
		t.Errorf("listed my_func:v1 with code %v", lines[1]["code"])
	}

	var del map[string]int
	e.ok("DELETE", "/v2/"+p+"/ops/my_func?digests="+v0.Digest, nil, &del)
	if del["num_deleted"] != 1 {
		t.Errorf("delete v0 = %v", del)
	}
	rec := e.send("GET", "/v2/"+p+"/ops/my_func/versions/"+v0.Digest, nil)
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "deleted_at") {
		t.Errorf("read deleted v0 = %d %s; want 404 with deleted_at", rec.Code, rec.Body)
	}
	e.ok("DELETE", "/v2/"+p+"/ops/my_func", nil, &del)
	if del["num_deleted"] != 1 {
		t.Errorf("delete the rest = %v; want the one live version", del)
	}
	if got := e.versions("/v2/" + p + "/ops"); !slices.Equal(got, []string{"Op:v0"}) {
		t.Errorf("list after deletes = %v", got)
	}
	e.fails("DELETE", "/v2/"+p+"/ops/my_func", nil, http.StatusNotFound)
}

func testV2OpPaging(t *testing.T, e *v2Env) {
	const p = "acme/paging"
	for _, name := range []string{"op_c", "op_a", "op_e", "op_b", "op_d"} {
		e.create(p, "ops", map[string]any{"name": name, "source_code": "def " + name + "(): pass"})
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{"op_a:v0", "op_b:v0", "op_c:v0", "op_d:v0", "op_e:v0"}},
		{"?limit=2", []string{"op_a:v0", "op_b:v0"}},
		{"?limit=2&offset=2", []string{"op_c:v0", "op_d:v0"}},
		{"?offset=3", []string{"op_d:v0", "op_e:v0"}},
		{"?limit=0", nil},
		{"?offset=9&eager=true", nil},
	}
	for _, tt := range tests {
		if got := e.versions("/v2/" + p + "/ops" + tt.query); !slices.Equal(got, tt.want) {
			t.Errorf("list%s = %v; want %v", tt.query, got, tt.want)
		}
	}
}

// datasetJSON is DatasetReadRes.
type datasetJSON struct {
	ObjectID     string  `json:"object_id"`
	Digest       string  `json:"digest"`
	VersionIndex int64   `json:"version_index"`
	Name         string  `json:"name"`
	Description  *string `json:"description"`
	Rows         string  `json:"rows"`
}

func testV2Datasets(t *testing.T, e *v2Env) {
	const p = "acme/data"
	rows := []map[string]any{{"q": "2+2", "a": 4}, {"q": "3*3", "a": 9}}
	c := e.create(p, "datasets", map[string]any{"name": "Math QA", "description": "arithmetic", "rows": rows})
	var ds datasetJSON
	e.ok("GET", "/v2/"+p+"/datasets/math_qa/versions/"+c.Digest, nil, &ds)
	if ds.ObjectID != "math_qa" || ds.Name != "Math QA" || ds.Description == nil || *ds.Description != "arithmetic" ||
		!strings.HasPrefix(ds.Rows, "weave:///acme/data/table/") {
		t.Fatalf("read = %+v", ds)
	}
	var table struct {
		Rows []struct{ Val map[string]any }
	}
	e.ok("POST", "/table/query", map[string]any{"project_id": p, "digest": strings.TrimPrefix(ds.Rows, "weave:///acme/data/table/")}, &table)
	if len(table.Rows) != 2 || table.Rows[1].Val["q"] != "3*3" {
		t.Errorf("rows of the table ref = %+v", table.Rows)
	}
	obj := e.readObj(p, "math_qa", c.Digest)
	if obj.BaseObjectClass == nil || *obj.BaseObjectClass != "Dataset" || obj.Kind != "object" {
		t.Errorf("/obj/read base_object_class %v kind %s", obj.BaseObjectClass, obj.Kind)
	}
	if v1 := e.create(p, "datasets", map[string]any{"name": "Math QA", "rows": rows[:1]}); v1.VersionIndex != 1 {
		t.Errorf("second dataset version = %+v", v1)
	}
	// A Dataset the Python SDK publishes is a dataset of this API too.
	var sdk struct{ Digest string }
	e.ok("POST", "/obj/create", map[string]any{"obj": map[string]any{"project_id": p, "object_id": "from_sdk", "val": map[string]any{
		"_type": "Dataset", "_class_name": "Dataset", "_bases": []string{"Object", "BaseModel"},
		"name": nil, "description": nil, "rows": ds.Rows}}}, &sdk)
	if got, want := e.versions("/v2/"+p+"/datasets"), []string{"math_qa:v0", "math_qa:v1", "from_sdk:v0"}; !slices.Equal(got, want) {
		t.Errorf("list = %v; want %v", got, want)
	}
	e.ok("GET", "/v2/"+p+"/datasets/from_sdk/versions/"+sdk.Digest, nil, &ds)
	if ds.Name != "from_sdk" || ds.Rows == "" {
		t.Errorf("SDK dataset read = %+v; want its object_id as name", ds)
	}
	unnamed := e.create(p, "datasets", map[string]any{"rows": []any{}})
	if unnamed.ObjectID != "Dataset" {
		t.Errorf("unnamed dataset = %+v", unnamed)
	}
}

func testV2Scorers(t *testing.T, e *v2Env) {
	const p = "acme/scoring"
	code := "def score(output, expected):\n    return output == expected\n"
	c := e.create(p, "scorers", map[string]any{"name": "Exact Match", "op_source_code": code})
	if c.ObjectID != "exact_match" || c.Scorer != "weave:///acme/scoring/object/exact_match:"+c.Digest {
		t.Fatalf("create = %+v", c)
	}
	var sc struct {
		Name    string `json:"name"`
		ScoreOp string `json:"score_op"`
	}
	e.ok("GET", "/v2/"+p+"/scorers/exact_match/versions/"+c.Digest, nil, &sc)
	name, digest, ok := strings.Cut(strings.TrimPrefix(sc.ScoreOp, "weave:///acme/scoring/op/"), ":")
	if sc.Name != "Exact Match" || !ok || name != "exact_match_score" {
		t.Fatalf("read = %+v", sc)
	}
	var op opJSON
	e.ok("GET", "/v2/"+p+"/ops/"+name+"/versions/"+digest, nil, &op)
	if op.Code != code {
		t.Errorf("score op code = %q; want the code sent", op.Code)
	}
	if got := e.versions("/v2/" + p + "/scorers"); !slices.Equal(got, []string{"exact_match:v0"}) {
		t.Errorf("list = %v", got)
	}
	if got := e.versions("/v2/" + p + "/ops"); !slices.Equal(got, []string{"exact_match_score:v0", "exact_match_summarize:v0"}) {
		t.Errorf("ops of the scorer = %v", got)
	}
}

func testV2Evaluations(t *testing.T, e *v2Env) {
	const p = "acme/evals"
	ds := e.create(p, "datasets", map[string]any{"name": "qa", "rows": []any{map[string]any{"q": 1}}})
	sc := e.create(p, "scorers", map[string]any{"name": "s", "op_source_code": "def score(output): return 1"})
	dsRef := "weave:///acme/evals/object/qa:" + ds.Digest
	c := e.create(p, "evaluations", map[string]any{"name": "Nightly", "dataset": dsRef, "scorers": []string{sc.Scorer},
		"eval_attributes": map[string]any{"team": "ml"}})
	if c.EvaluationRef != "weave:///acme/evals/object/nightly:"+c.Digest || c.VersionIndex != 0 {
		t.Fatalf("create = %+v", c)
	}
	var ev struct {
		Name, Dataset, EvaluateOp, SummarizeOp string
		Scorers                                []string
		Trials                                 int64
		PredictAndScoreOp                      string `json:"predict_and_score_op"`
	}
	e.ok("GET", "/v2/"+p+"/evaluations/nightly/versions/"+c.Digest, nil, &ev)
	if ev.Name != "Nightly" || ev.Dataset != dsRef || !slices.Equal(ev.Scorers, []string{sc.Scorer}) || ev.Trials != 1 ||
		!strings.HasPrefix(ev.PredictAndScoreOp, "weave:///acme/evals/op/nightly_predict_and_score:") {
		t.Errorf("read = %+v", ev)
	}
	var val map[string]any
	if err := json.Unmarshal(e.readObj(p, "nightly", c.Digest).Val, &val); err != nil || val["team"] != "ml" || val["_class_name"] != "Evaluation" {
		t.Errorf("/obj/read val = %v (%v)", val, err)
	}
	if got := e.versions("/v2/" + p + "/evaluations"); !slices.Equal(got, []string{"nightly:v0"}) {
		t.Errorf("list = %v", got)
	}
}

func testV2Models(t *testing.T, e *v2Env) {
	const p = "acme/models"
	code := "class Echo(weave.Model):\n    def predict(self, x):\n        return x\n"
	c := e.create(p, "models", map[string]any{"name": "Echo", "source_code": code, "attributes": map[string]any{"temperature": 0.5}})
	if c.ModelRef != "weave:///acme/models/object/echo:"+c.Digest {
		t.Fatalf("create = %+v", c)
	}
	var m struct {
		Name       string         `json:"name"`
		SourceCode string         `json:"source_code"`
		Attributes map[string]any `json:"attributes"`
	}
	e.ok("GET", "/v2/"+p+"/models/echo/versions/"+c.Digest, nil, &m)
	if m.Name != "Echo" || m.SourceCode != code || m.Attributes["temperature"] != 0.5 || len(m.Attributes) != 1 {
		t.Errorf("read = %+v", m)
	}
	// A Model subclass the SDK publishes: listed, with no source file.
	e.ok("POST", "/obj/create", map[string]any{"obj": map[string]any{"project_id": p, "object_id": "sdk_model", "val": map[string]any{
		"_type": "MyModel", "_class_name": "MyModel", "_bases": []string{"Model", "Object", "BaseModel"}, "prompt": "hi"}}}, nil)
	lines := e.list("/v2/" + p + "/models")
	if len(lines) != 2 || lines[1]["object_id"] != "sdk_model" || lines[1]["source_code"] != "" ||
		lines[1]["attributes"].(map[string]any)["prompt"] != "hi" {
		t.Errorf("list = %v", lines)
	}
}

// testV2KindsApart checks that one family's endpoints neither read, list
// nor delete another family's objects.
func testV2KindsApart(t *testing.T, e *v2Env) {
	const p = "acme/apart"
	ds := e.create(p, "datasets", map[string]any{"name": "shared", "rows": []any{}})
	e.fails("GET", "/v2/"+p+"/models/shared/versions/"+ds.Digest, nil, http.StatusNotFound)
	e.fails("GET", "/v2/"+p+"/ops/shared/versions/"+ds.Digest, nil, http.StatusNotFound)
	e.fails("DELETE", "/v2/"+p+"/models/shared", nil, http.StatusNotFound)
	e.fails("DELETE", "/v2/"+p+"/scorers/shared?digests="+ds.Digest, nil, http.StatusNotFound)
	if got := e.list("/v2/" + p + "/models"); len(got) != 0 {
		t.Errorf("models list shows %v", got)
	}
	if got := e.list("/v2/" + p + "/ops"); len(got) != 0 {
		t.Errorf("ops list shows %v", got)
	}
	e.readObj(p, "shared", ds.Digest) // still there
}

func testV2BadRequests(t *testing.T, e *v2Env) {
	const p = "acme/bad"
	unknownDigest := strings.Repeat("A", 43)
	tests := []struct {
		name, method, path string
		body               any
		status             int
		reason             string // a part the reason must hold
	}{
		{"unknown op version", "GET", "/ops/nope/versions/" + unknownDigest, nil, http.StatusNotFound, "nope"},
		{"unknown dataset version", "GET", "/datasets/nope/versions/latest", nil, http.StatusNotFound, "not found"},
		{"delete unknown", "DELETE", "/evaluations/nope", nil, http.StatusNotFound, "nope"},
		{"negative limit", "GET", "/ops?limit=-1", nil, http.StatusBadRequest, "limit"},
		{"limit not a number", "GET", "/datasets?limit=ten", nil, http.StatusUnprocessableEntity, "integer"},
		{"negative offset", "GET", "/models?offset=-5", nil, http.StatusBadRequest, "offset"},
		{"rows missing", "POST", "/datasets", map[string]any{"name": "d"}, http.StatusUnprocessableEntity, "rows"},
		{"row not an object", "POST", "/datasets", map[string]any{"rows": []any{1}}, http.StatusUnprocessableEntity, "rows[0]"},
		{"unknown field", "POST", "/ops", map[string]any{"name": "x", "code": "y"}, http.StatusUnprocessableEntity, "code"},
		{"bad name", "POST", "/ops", map[string]any{"name": "a:b"}, http.StatusUnprocessableEntity, "object_id"},
		{"scorer without code", "POST", "/scorers", map[string]any{"name": "s"}, http.StatusUnprocessableEntity, "op_source_code"},
		{"dataset not a ref", "POST", "/evaluations", map[string]any{"name": "e", "dataset": "qa"}, http.StatusBadRequest, "dataset"},
		{"zero trials", "POST", "/evaluations", map[string]any{"name": "e", "dataset": "weave:///acme/bad/object/qa:x", "trials": 0},
			http.StatusBadRequest, "trials"},
		{"attribute the server sets", "POST", "/models", map[string]any{"name": "m", "source_code": "x",
			"attributes": map[string]any{"_class_name": "Evil"}}, http.StatusBadRequest, "attributes._class_name"},
		{"not JSON", "POST", "/models", "{", http.StatusUnprocessableEntity, "JSON"},
	}
	for _, tt := range tests {
		if reason := e.fails(tt.method, "/v2/"+p+tt.path, tt.body, tt.status); !strings.Contains(reason, tt.reason) {
			t.Errorf("%s: reason %q does not mention %q", tt.name, reason, tt.reason)
		}
	}
	if got := e.list("/v2/" + p + "/ops"); len(got) != 0 {
		t.Errorf("refused creates left ops behind: %v", got)
	}
}

func testV2ProjectScoping(t *testing.T, e *v2Env) {
	const p = "acme/private"
	c := e.create(p, "ops", map[string]any{"name": "secret", "source_code": "def secret(): pass"})
	read := "/v2/" + p + "/ops/secret/versions/" + c.Digest

	e.caller = principal("rival", auth.RoleAdmin)
	e.fails("GET", read, nil, http.StatusForbidden)
	e.fails("GET", "/v2/"+p+"/ops", nil, http.StatusForbidden)
	e.fails("POST", "/v2/"+p+"/ops", map[string]any{"name": "mine"}, http.StatusForbidden)
	e.fails("DELETE", "/v2/"+p+"/ops/secret", nil, http.StatusForbidden)
	if got := e.list("/v2/rival/private/ops"); len(got) != 0 {
		t.Errorf("another entity's project of the same name lists %v", got)
	}
	e.fails("GET", "/v2/rival/private/ops/secret/versions/"+c.Digest, nil, http.StatusNotFound)

	e.caller = principal("acme", auth.RoleViewer)
	e.ok("GET", read, nil, nil)
	e.fails("POST", "/v2/"+p+"/datasets", map[string]any{"rows": []any{}}, http.StatusForbidden)
	e.fails("DELETE", "/v2/"+p+"/ops/secret", nil, http.StatusForbidden)
	if got := e.versions("/v2/" + p + "/ops"); !slices.Equal(got, []string{"secret:v0"}) {
		t.Errorf("after refused writes the project holds %v", got)
	}
}
