package tssdk_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// client reads what weft stored, with the same key the SDK used.
type client struct {
	t         *testing.T
	base, key string
	http      *http.Client // nil: http.DefaultClient
}

func (c *client) post(path string, body any) (int, []byte) {
	c.t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		c.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, c.base+path, bytes.NewReader(raw))
	if err != nil {
		c.t.Fatal(err)
	}
	req.SetBasicAuth("api", c.key)
	hc := c.http
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		c.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, out
}

// ok posts body and decodes the 200 answer into v, or fails the test.
func (c *client) ok(t *testing.T, path string, body, v any) bool {
	t.Helper()
	status, out := c.post(path, body)
	if status != http.StatusOK {
		t.Errorf("POST %s = %d: %s", path, status, out)
		return false
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Errorf("POST %s: %v in %s", path, err, out)
		return false
	}
	return true
}

// call is one CallSchema as /calls/stream_query returns it.
type call map[string]any

func (c call) str(key string) string { s, _ := c[key].(string); return s }

// op is the op's name without its ref prefix and version.
func (c call) op() string {
	name := c.str("op_name")
	if i := strings.LastIndex(name, "/op/"); i >= 0 {
		name = name[i+len("/op/"):]
	}
	name, _, _ = strings.Cut(name, ":")
	return name
}

func (c *client) calls() []call {
	c.t.Helper()
	return c.callsOf("", project)
}

// callsOf reads the calls of projectID from the trace API under prefix.
func (c *client) callsOf(prefix, projectID string) []call {
	c.t.Helper()
	status, out := c.post(prefix+"/calls/stream_query", map[string]any{"project_id": projectID})
	if status != http.StatusOK {
		c.t.Fatalf("calls/stream_query = %d: %s", status, out)
	}
	var calls []call
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var cl call
		if err := json.Unmarshal(sc.Bytes(), &cl); err != nil {
			c.t.Fatalf("stream line %q: %v", sc.Text(), err)
		}
		calls = append(calls, cl)
	}
	return calls
}

func withOp(calls []call, op string) []call {
	var out []call
	for _, c := range calls {
		if c.op() == op {
			out = append(out, c)
		}
	}
	return out
}

func childrenOf(calls []call, parent call, op string) []call {
	var out []call
	for _, c := range withOp(calls, op) {
		if c.str("parent_id") == parent.str("id") && c.str("trace_id") == parent.str("trace_id") {
			out = append(out, c)
		}
	}
	return out
}

// jsonEq compares two values by their JSON form.
func jsonEq(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

func checkPipeline(t *testing.T, calls []call, res scriptResult) {
	roots := withOp(calls, "pipeline")
	if len(roots) != 1 {
		t.Fatalf("%d pipeline calls; want 1", len(roots))
	}
	root := roots[0]
	if root.str("id") != res.PipelineRootID || root["parent_id"] != nil || root.str("display_name") != "renamed pipeline" {
		t.Errorf("pipeline root id %s parent %v display_name %q; want %s, none, the rename", root.str("id"), root["parent_id"], root.str("display_name"), res.PipelineRootID)
	}
	if !jsonEq(root["output"], map[string]any{"input": 3, "sum": 4, "caught": "kaboom: on purpose (4)"}) || root.str("wb_user_id") != sdkUser {
		t.Errorf("pipeline output %v, wb_user_id %v", root["output"], root["wb_user_id"])
	}
	adds, explodes := childrenOf(calls, root, "add"), childrenOf(calls, root, "explode")
	if len(adds) != 1 || !jsonEq(adds[0]["output"], 4) || adds[0]["exception"] != nil {
		t.Errorf("add children of pipeline: %v", adds)
	}
	if len(explodes) != 1 || explodes[0]["output"] != nil || !strings.Contains(explodes[0].str("exception"), "kaboom: on purpose (4)") {
		t.Errorf("explode children of pipeline: %v", explodes)
	}
	for _, c := range append(adds, explodes...) {
		if c.str("ended_at") == "" || c.str("started_at") < root.str("started_at") {
			t.Errorf("%s: started %s, ended %s, root started %s", c.op(), c.str("started_at"), c.str("ended_at"), root.str("started_at"))
		}
	}
}

type objRes struct {
	Obj struct {
		Digest   string          `json:"digest"`
		Kind     string          `json:"kind"`
		IsLatest int             `json:"is_latest"`
		Val      json.RawMessage `json:"val"`
		WBUserID *string         `json:"wb_user_id"`
	} `json:"obj"`
}

func checkSettings(t *testing.T, c *client, res scriptResult) {
	for _, sel := range []string{res.SettingsDigest, "latest"} {
		var o objRes
		if !c.ok(t, "/obj/read", map[string]any{"project_id": project, "object_id": "settings", "digest": sel}, &o) {
			continue
		}
		var val any
		_ = json.Unmarshal(o.Obj.Val, &val)
		want := map[string]any{"model": "fake-model", "stop": []string{"\n"}, "temperature": 0.2}
		if o.Obj.Digest != res.SettingsDigest || !jsonEq(val, want) || o.Obj.Kind != "object" || o.Obj.IsLatest != 1 {
			t.Errorf("settings at %s: %+v", sel, o.Obj)
		}
		if o.Obj.WBUserID == nil || *o.Obj.WBUserID != sdkUser {
			t.Errorf("settings wb_user_id %v; want %s", o.Obj.WBUserID, sdkUser)
		}
	}
}

func checkDataset(t *testing.T, c *client, res scriptResult) {
	want := []map[string]any{{"question": "capital of France?", "expected": "Paris"},
		{"question": "2+2?", "expected": "4"}, {"question": "color of the sky?", "expected": "blue"}}
	if !jsonEq(res.RowsBack, want) {
		t.Errorf("rows the SDK read back: %v", res.RowsBack)
	}
	var o objRes
	if !c.ok(t, "/obj/read", map[string]any{"project_id": project, "object_id": "qa", "digest": res.DatasetDigest}, &o) {
		return
	}
	var ds struct {
		Type string `json:"_type"`
		Rows string `json:"rows"`
	}
	_ = json.Unmarshal(o.Obj.Val, &ds)
	table, ok := strings.CutPrefix(ds.Rows, "weave:///"+project+"/table/")
	if ds.Type != "Dataset" || !ok {
		t.Fatalf("dataset val %s", o.Obj.Val)
	}
	var rows struct {
		Rows []struct {
			Digest string         `json:"digest"`
			Val    map[string]any `json:"val"`
		} `json:"rows"`
	}
	if !c.ok(t, "/table/query", map[string]any{"project_id": project, "digest": table}, &rows) || len(rows.Rows) != len(want) {
		t.Fatalf("table rows: %+v", rows.Rows)
	}
	for i, r := range rows.Rows {
		if !jsonEq(r.Val, want[i]) {
			t.Errorf("row %d = %v; want %v", i, r.Val, want[i])
		}
	}
	rowRef := "weave:///" + project + "/object/qa:" + res.DatasetDigest + "/attr/rows/id/" + rows.Rows[1].Digest
	var refs struct{ Vals []map[string]any }
	if c.ok(t, "/refs/read_batch", map[string]any{"refs": []string{rowRef}}, &refs) && !jsonEq(refs.Vals, []any{want[1]}) {
		t.Errorf("%s = %v", rowRef, refs.Vals)
	}
}

func checkImage(t *testing.T, c *client, calls []call, res scriptResult) {
	described := withOp(calls, "describeImage")
	if len(described) != 1 {
		t.Fatalf("%d describeImage calls; want 1", len(described))
	}
	var digest string
	for _, v := range described[0]["inputs"].(map[string]any) {
		img, _ := v.(map[string]any)
		files, _ := img["files"].(map[string]any)
		if img["_type"] == "CustomWeaveType" && files != nil {
			digest, _ = files["image.png"].(string)
		}
	}
	if digest == "" {
		t.Fatalf("describeImage inputs hold no image: %v", described[0]["inputs"])
	}
	status, content := c.post("/file/content", map[string]any{"project_id": project, "digest": digest})
	png, _ := base64.StdEncoding.DecodeString(res.PNGBase64)
	if status != http.StatusOK || !bytes.Equal(content, png) {
		t.Errorf("/file/content of the image %s = %d %q; want the %d PNG bytes", digest, status, content, len(png))
	}
}

func checkCallsReadBack(t *testing.T, calls []call, res scriptResult) {
	var ids []string
	for _, c := range calls {
		ids = append(ids, c.str("id"))
	}
	slices.Sort(ids)
	got := slices.Sorted(slices.Values(res.CallIDs))
	if !slices.Equal(got, ids) {
		t.Errorf("the SDK read %d calls, weft stored %d:\n%v\n%v", len(got), len(ids), got, ids)
	}
	for _, op := range []string{"pipeline", "describeImage", "Evaluation.evaluate"} {
		if !slices.ContainsFunc(res.RootOps, func(name string) bool { return strings.Contains(name, "/op/"+op+":") }) {
			t.Errorf("no %s among the roots the SDK read: %v", op, res.RootOps)
		}
	}
}
