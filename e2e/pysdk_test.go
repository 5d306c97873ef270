package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// pySDK replays, against a weft binary, the requests the Weave Python SDK
// makes with only WANDB_BASE_URL and WANDB_API_KEY set: the W&B GraphQL
// API at <base>/graphql, the trace server at <base>/traces.
type pySDK struct {
	t       *testing.T
	c       *client
	project string // entity/project, once init resolved the entity
}

// TestPythonSDKRequestSequence: weave.init("py-quickstart") without an
// entity, a traced op renamed right after it ran, a published dataset and
// an evaluation over it, each as the SDK's source sends them, then the
// reads its client makes; everything comes back as the SDK meant it.
func TestPythonSDKRequestSequence(t *testing.T) {
	data := t.TempDir()
	out, err := exec.Command(binary(t), "keys", "create", "--data-dir", data, "--entity", "acme", "--user", "py-user").Output()
	if err != nil {
		t.Fatalf("keys create: %v", err)
	}
	key := strings.TrimSpace(string(out)[strings.LastIndex(strings.TrimSpace(string(out)), "\n")+1:])
	// A store with a key already has no first-start admin key to print.
	p := startWeftArgs(t, []string{"serve", "--listen", "127.0.0.1:0", "--otlp-grpc-listen", "", "--data-dir", data})
	sdk := &pySDK{t: t, c: newClient(t, p.URL, key)}

	sdk.init("py-quickstart")
	if sdk.project != "acme/py-quickstart" {
		t.Fatalf("init resolved %q; want acme/py-quickstart", sdk.project)
	}
	add := sdk.publishOp("add", "def add(a: int, b: int) -> int:\n    return a + b\n")
	renamed := sdk.tracedCallRenamedAtOnce(add)
	rows := []map[string]any{{"question": "capital of France?", "expected": "Paris"}, {"question": "2+2?", "expected": "4"}}
	dataset, rowDigests := sdk.publishDataset("qa", rows)
	eval := sdk.evaluate(dataset, rowDigests, rows)

	sdk.checkRenamed(renamed)
	sdk.checkDataset(dataset, rows)
	sdk.checkEvaluation(eval, len(rows))
}

// send posts body (JSON, or multipart when it is a *bytes.Buffer with a
// content type) and decodes a 200 answer into v.
func (s *pySDK) send(method, path string, body any, v any) {
	s.t.Helper()
	status, raw := s.c.do(method, path, body)
	if status != http.StatusOK {
		s.t.Fatalf("%s %s = %d: %s", method, path, status, raw)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			s.t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
}

// init is weave.init: the default entity from GraphQL, the project looked
// up (and upserted if missing), the user name, then the server's version
// gate.
func (s *pySDK) init(projectName string) {
	var viewer struct {
		Data struct {
			Viewer struct {
				Username      string
				DefaultEntity struct{ Name string }
			}
		}
		Errors []any
	}
	s.send(http.MethodPost, "/graphql", map[string]any{"query": pyGraphQL.defaultEntity}, &viewer)
	entity := viewer.Data.Viewer.DefaultEntity.Name
	var project struct {
		Data   struct{ Project *struct{ Name string } }
		Errors []any
	}
	s.send(http.MethodPost, "/graphql", map[string]any{"query": pyGraphQL.project,
		"variables": map[string]any{"entityName": entity, "name": projectName}}, &project)
	if project.Data.Project == nil {
		var upsert map[string]any
		s.send(http.MethodPost, "/graphql", map[string]any{"query": pyGraphQL.upsert,
			"variables": map[string]any{"name": projectName, "entity": entity, "description": nil}}, &upsert)
	}
	s.send(http.MethodPost, "/graphql", map[string]any{"query": pyGraphQL.defaultEntity}, &viewer)
	if len(viewer.Errors)+len(project.Errors) > 0 || viewer.Data.Viewer.Username != "py-user" {
		s.t.Fatalf("GraphQL answered errors %v %v, username %q", viewer.Errors, project.Errors, viewer.Data.Viewer.Username)
	}
	var info struct {
		MinRequired string `json:"min_required_weave_python_version"`
	}
	s.send(http.MethodGet, "/traces/server_info", nil, &info)
	if info.MinRequired == "" {
		s.t.Fatal("server_info has no min_required_weave_python_version")
	}
	s.project = entity + "/" + projectName
}

// publishOp saves an op as the SDK does: its source through
// /files/create, then the op object naming the file; it returns the ref.
func (s *pySDK) publishOp(name, source string) string {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("project_id", s.project)
	fw, err := mw.CreateFormFile("file", "obj.py")
	if err != nil {
		s.t.Fatal(err)
	}
	_, _ = io.WriteString(fw, source)
	_ = mw.Close()
	var file struct{ Digest string }
	s.send(http.MethodPost, "/traces/files/create", multipartBody{&buf, mw.FormDataContentType()}, &file)
	var obj struct{ Digest string }
	s.send(http.MethodPost, "/traces/obj/create", pyObjCreate(s.project, name, pyOpVal(file.Digest)), &obj)
	return fmt.Sprintf("weave:///%s/op/%s:%s", s.project, name, obj.Digest)
}

// tracedCallRenamedAtOnce calls an op and renames the call at once: the
// SDK queues finished calls for /calls/complete, so the rename
// (/call/update) reaches the server before the call itself.
func (s *pySDK) tracedCallRenamedAtOnce(opRef string) string {
	c := pyCall{id: pyID(), traceID: pyID(), opRef: opRef, inputs: map[string]any{"a": 1, "b": 2}, output: 3, end: time.Millisecond}
	s.send(http.MethodPost, "/traces/call/update", map[string]any{"project_id": s.project, "call_id": c.id,
		"display_name": "renamed at once", "wb_user_id": nil}, nil)
	s.send(http.MethodPost, "/traces/v2/"+s.project+"/calls/complete", map[string]any{"batch": []any{c.complete(s.project)}}, nil)
	return c.id
}

// publishDataset is Dataset publishing: the rows as a table, then the
// Dataset object referring to it.
func (s *pySDK) publishDataset(name string, rows []map[string]any) (ref string, rowDigests []string) {
	var table struct {
		Digest     string
		RowDigests []string `json:"row_digests"`
	}
	s.send(http.MethodPost, "/traces/table/create", map[string]any{"table": map[string]any{
		"project_id": s.project, "rows": rows, "expected_digest": nil}}, &table)
	val := pyObject("_type", "Dataset", "name", name, "description", nil,
		"rows", fmt.Sprintf("weave:///%s/table/%s", s.project, table.Digest), "_class_name", "Dataset", "_bases", []string{"Object", "BaseModel"})
	var obj struct{ Digest string }
	s.send(http.MethodPost, "/traces/obj/create", pyObjCreate(s.project, name, val), &obj)
	return fmt.Sprintf("weave:///%s/object/%s:%s", s.project, name, obj.Digest), table.RowDigests
}

// multipartBody is a form the client sends as it is.
type multipartBody struct {
	body        *bytes.Buffer
	contentType string
}

// do sends one request with the client's key, if any, as the SDKs send
// it (Basic api:KEY), and returns status and body.
func (c *client) do(method, path string, body any) (int, []byte) {
	c.t.Helper()
	var r io.Reader
	contentType := "application/json"
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case multipartBody:
		r, contentType = b.body, b.contentType
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	if c.key != "" {
		req.SetBasicAuth("api", c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, out
}
