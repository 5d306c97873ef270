package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
)

// TestPythonSDKNewerEndpoints replays, against a weft binary, the newer
// trace-server APIs the current Weave SDK and UI call: the protocol
// version gate, client-side digests' project lookup, usage rollups,
// project statistics and retention, the v2 object and evaluation-run
// APIs and annotation queues, each with the bodies the SDK sends; every
// answer parses as the SDK's models expect.
func TestPythonSDKNewerEndpoints(t *testing.T) {
	data := t.TempDir()
	keyOf := func(args ...string) string {
		out, err := exec.Command(binary(t), append([]string{"keys", "create", "--data-dir", data, "--entity", "acme"}, args...)...).Output()
		if err != nil {
			t.Fatalf("keys create: %v", err)
		}
		s := strings.TrimSpace(string(out))
		return s[strings.LastIndex(s, "\n")+1:]
	}
	member, admin := keyOf("--user", "py-user"), keyOf("--user", "py-admin", "--role", "admin")
	p := startWeftArgs(t, []string{"serve", "--listen", "127.0.0.1:0", "--otlp-grpc-listen", "", "--data-dir", data})
	sdk := &pySDK{t: t, c: newClient(t, p.URL, member)}
	sdk.init("py-newer")
	proj := sdk.project

	var info struct {
		TraceServerVersion string `json:"trace_server_version"`
	}
	sdk.send(http.MethodGet, "/traces/server_info", nil, &info)
	if info.TraceServerVersion != "0.1.0" {
		t.Errorf("trace_server_version %q; want the protocol version 0.1.0", info.TraceServerVersion)
	}
	var ids []map[string]string
	sdk.send(http.MethodPost, "/traces/service/projects_info", map[string]any{"project_ids": []string{proj}}, &ids)
	if len(ids) != 1 || ids[0]["internal_project_id"] != proj || ids[0]["external_project_id"] != proj {
		t.Errorf("projects_info = %v; want %s mapped to itself", ids, proj)
	}

	// A traced LLM call under a root, then the rollups the UI reads.
	root, child := pyID(), pyID()
	trace := pyID()
	llm := map[string]any{"gpt-4o": map[string]any{"prompt_tokens": 12, "completion_tokens": 3, "requests": 1, "total_tokens": 15}}
	calls := []any{
		pyCall{id: root, traceID: trace, opRef: "weave:///" + proj + "/op/agent:x", inputs: map[string]any{}, output: "ok"}.complete(proj),
		withUsage(pyCall{id: child, traceID: trace, parentID: root, opRef: "weave:///" + proj + "/op/openai.chat:y", inputs: map[string]any{}, output: "hi"}.complete(proj), llm),
	}
	sdk.send(http.MethodPost, "/traces/v2/"+proj+"/calls/complete", map[string]any{"batch": calls}, nil)
	var usage struct {
		CallUsage         map[string]map[string]map[string]any `json:"call_usage"`
		UnfinishedCallIDs []string                             `json:"unfinished_call_ids"`
	}
	sdk.send(http.MethodPost, "/traces/calls/usage", map[string]any{"project_id": proj, "call_ids": []string{root}, "include_costs": true, "limit": 10000}, &usage)
	if got := usage.CallUsage[root]["gpt-4o"]; got["prompt_tokens"] != 12.0 || got["total_tokens"] != 15.0 || got["prompt_tokens_total_cost"] == nil {
		t.Errorf("calls/usage of the root = %v; want its child's 12 prompt tokens, 15 in all, priced", usage.CallUsage)
	}
	sdk.send(http.MethodPost, "/traces/trace/usage", map[string]any{"project_id": proj, "filter": map[string]any{"trace_ids": []string{trace}}, "query": nil, "include_costs": false, "limit": 10000}, &usage)
	if len(usage.CallUsage) != 2 || usage.CallUsage[child]["gpt-4o"]["completion_tokens"] != 3.0 {
		t.Errorf("trace/usage = %v; want both calls, the child with 3 completion tokens", usage.CallUsage)
	}

	var stats map[string]int64
	sdk.send(http.MethodPost, "/traces/project/stats", map[string]any{"project_id": proj, "include_trace_storage_size": true,
		"include_object_storage_size": true, "include_table_storage_size": true, "include_file_storage_size": true}, &stats)
	for _, k := range []string{"trace_storage_size_bytes", "objects_storage_size_bytes", "tables_storage_size_bytes", "files_storage_size_bytes"} {
		if _, ok := stats[k]; !ok {
			t.Errorf("project/stats lacks %s: %v", k, stats)
		}
	}

	// Retention: a member reads it, an admin sets it.
	ttl := func(c *client, path string, body map[string]any) (int, string) {
		status, out := c.do(http.MethodPost, "/traces/project/ttl_settings/"+path, body)
		return status, strings.TrimSpace(string(out))
	}
	if status, out := ttl(sdk.c, "read", map[string]any{"project_id": proj}); status != 200 || out != `{"retention_days":null}` {
		t.Errorf("ttl read = %d %s; want null (no retention configured)", status, out)
	}
	if status, _ := ttl(sdk.c, "update", map[string]any{"project_id": proj, "retention_days": 30, "wb_user_id": nil}); status != http.StatusForbidden {
		t.Errorf("a member set the retention: %d", status)
	}
	if status, out := ttl(newClient(t, p.URL, admin), "update", map[string]any{"project_id": proj, "retention_days": 30, "wb_user_id": nil}); status != 200 || out != `{"retention_days":30}` {
		t.Errorf("ttl update = %d %s", status, out)
	}
	if _, out := ttl(sdk.c, "read", map[string]any{"project_id": proj}); out != `{"retention_days":30}` {
		t.Errorf("ttl read after the update = %s", out)
	}

	// The v2 object API and the objects API see the same op.
	var op struct {
		Digest       string `json:"digest"`
		ObjectID     string `json:"object_id"`
		VersionIndex int    `json:"version_index"`
	}
	sdk.send(http.MethodPost, "/traces/v2/"+proj+"/ops", map[string]any{"name": "greet", "source_code": "def greet(n):\n    return 'hi ' + n\n"}, &op)
	var read struct {
		Code string `json:"code"`
	}
	sdk.send(http.MethodGet, "/traces/v2/"+proj+"/ops/"+op.ObjectID+"/versions/"+op.Digest, nil, &read)
	if !strings.Contains(read.Code, "return 'hi ' + n") {
		t.Errorf("v2 op read code %q", read.Code)
	}
	var objs struct {
		Objs []map[string]any `json:"objs"`
	}
	sdk.send(http.MethodPost, "/traces/objs/query", map[string]any{"project_id": proj, "filter": map[string]any{"is_op": true, "object_ids": []string{op.ObjectID}}}, &objs)
	if len(objs.Objs) != 1 || objs.Objs[0]["digest"] != op.Digest {
		t.Errorf("objs/query sees %v; want the v2 op %s", objs.Objs, op.Digest)
	}

	// An evaluation run recorded through the v2 API shows as calls.
	var model, evaluation struct {
		ModelRef      string `json:"model_ref"`
		EvaluationRef string `json:"evaluation_ref"`
		Digest        string `json:"digest"`
	}
	sdk.send(http.MethodPost, "/traces/v2/"+proj+"/models", map[string]any{"name": "echo", "source_code": "class Echo(weave.Model):\n    pass\n"}, &model)
	_, rowDigests := sdk.publishDataset("qs", []map[string]any{{"q": "a"}})
	_ = rowDigests
	sdk.send(http.MethodPost, "/traces/v2/"+proj+"/evaluations", map[string]any{"name": "ev", "dataset": "weave:///" + proj + "/object/qs:latest"}, &evaluation)
	var run struct {
		ID string `json:"evaluation_run_id"`
	}
	sdk.send(http.MethodPost, "/traces/v2/"+proj+"/evaluation_runs", map[string]any{"evaluation": evaluation.EvaluationRef, "model": model.ModelRef}, &run)
	var pred struct {
		ID string `json:"prediction_id"`
	}
	sdk.send(http.MethodPost, "/traces/v2/"+proj+"/predictions", map[string]any{"model": model.ModelRef, "inputs": map[string]any{"q": "a"}, "output": "a", "evaluation_run_id": run.ID}, &pred)
	var score struct {
		ID string `json:"score_id"`
	}
	sdk.send(http.MethodPost, "/traces/v2/"+proj+"/scores", map[string]any{"prediction_id": pred.ID, "scorer": "weave:///" + proj + "/object/exact:abc", "value": 1.0, "evaluation_run_id": run.ID}, &score)
	var done struct {
		Success bool `json:"success"`
	}
	sdk.send(http.MethodPost, "/traces/v2/"+proj+"/predictions/"+pred.ID+"/finish", map[string]any{}, &done)
	sdk.send(http.MethodPost, "/traces/v2/"+proj+"/evaluation_runs/"+run.ID+"/finish", map[string]any{"summary": map[string]any{"note": "done"}}, &done)
	var runRead struct {
		Status string `json:"status"`
		Model  string `json:"model"`
	}
	sdk.send(http.MethodGet, "/traces/v2/"+proj+"/evaluation_runs/"+run.ID, nil, &runRead)
	if runRead.Model != model.ModelRef || runRead.Status == "" {
		t.Errorf("evaluation run read = %+v; want the model %s and a status", runRead, model.ModelRef)
	}
	runCalls := sdk.calls(map[string]any{"trace_ids": []string{runTrace(sdk, run.ID)}})
	if len(runCalls) < 4 {
		t.Errorf("the run's trace holds %d calls; want the run, predict_and_score, predict, score and summarize", len(runCalls))
	}

	// An annotation queue over the traced calls, worked by the key's user.
	var queue struct {
		ID string `json:"id"`
	}
	sdk.send(http.MethodPost, "/traces/annotation_queues", map[string]any{"project_id": proj, "name": "Review", "description": "",
		"scorer_refs": []string{"weave:///" + proj + "/object/quality:abc"}}, &queue)
	var added struct {
		Added      int `json:"added_count"`
		Duplicates int `json:"duplicates"`
	}
	sdk.send(http.MethodPost, "/traces/annotation_queues/"+queue.ID+"/items", map[string]any{"project_id": proj, "call_ids": []string{root, child, root},
		"display_fields": []string{"inputs", "output"}}, &added)
	if added.Added != 2 {
		t.Errorf("added %+v; want 2 calls", added)
	}
	var items struct {
		Items []map[string]any `json:"items"`
	}
	sdk.send(http.MethodPost, "/traces/annotation_queues/"+queue.ID+"/items/query", map[string]any{"project_id": proj}, &items)
	if len(items.Items) != 2 {
		t.Fatalf("queue items %v", items.Items)
	}
	var progressed struct {
		Item map[string]any `json:"item"`
	}
	sdk.send(http.MethodPost, "/traces/annotation_queues/"+queue.ID+"/items/"+items.Items[0]["id"].(string)+"/progress",
		map[string]any{"project_id": proj, "annotation_state": "completed"}, &progressed)
	if progressed.Item["annotation_state"] != "completed" || progressed.Item["annotator_user_id"] != "py-user" {
		t.Errorf("progress = %v; want completed by py-user", progressed.Item)
	}
	var qstats struct {
		Stats []map[string]any `json:"stats"`
	}
	sdk.send(http.MethodPost, "/traces/annotation_queues/stats", map[string]any{"project_id": proj, "queue_ids": []string{queue.ID}}, &qstats)
	if len(qstats.Stats) != 1 || qstats.Stats[0]["total_items"] != 2.0 || qstats.Stats[0]["completed_items"] != 1.0 {
		t.Errorf("queue stats %v; want 2 items, 1 completed", qstats.Stats)
	}
	status, body := sdk.c.do(http.MethodPost, "/traces/annotation_queues/query", map[string]any{"project_id": proj})
	sc := bufio.NewScanner(bytes.NewReader(body))
	var queues int
	for sc.Scan() {
		var q map[string]any
		if json.Unmarshal(sc.Bytes(), &q) != nil || q["id"] != queue.ID {
			t.Errorf("queues line %s", sc.Bytes())
		}
		queues++
	}
	if status != 200 || queues != 1 {
		t.Errorf("annotation_queues/query = %d with %d queues; want 1", status, queues)
	}
}

// withUsage adds summary.usage to a calls/complete item.
func withUsage(call map[string]any, usage map[string]any) map[string]any {
	call["summary"] = map[string]any{"usage": usage}
	return call
}

// runTrace is the trace id of an evaluation run's call.
func runTrace(s *pySDK, runID string) string {
	calls := s.calls(map[string]any{"call_ids": []string{runID}})
	if len(calls) != 1 {
		s.t.Fatalf("the run's call: %v", calls)
	}
	return calls[0]["trace_id"].(string)
}
