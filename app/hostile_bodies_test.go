package app_test

import (
	"strings"
	"time"
)

type request struct{ path, body string }

// fill replaces $P with the project, $S with the fragment as a JSON string
// and $J with the fragment inside JSON text inside a JSON string (as OTLP
// attributes carry JSON).
func fill(project, frag string, templates ...request) []request {
	r := strings.NewReplacer("$P", `"`+project+`"`, "$S", `"`+frag+`"`,
		"$J", `"{\"q\":\"`+strings.ReplaceAll(frag, `\`, `\\`)+`\"}"`)
	out := make([]request, len(templates))
	for i, t := range templates {
		out[i] = request{t.path, r.Replace(t.body)}
	}
	return out
}

const (
	at    = `"2025-01-01T00:00:00Z"`
	later = `"2025-01-01T00:00:01Z"`
	ref   = `"weave:///acme/REF/call/c1"`
)

// writeBodies puts frag in every string position of every write endpoint:
// values, keys, names, ids.
func writeBodies(project, frag string) []request {
	start := `{"project_id":$P,"id":"c1","trace_id":"t1","op_name":$S,"display_name":$S,"thread_id":$S,"turn_id":$S,"started_at":` + at +
		`,"attributes":{$S:$S,"a":$S},"inputs":{$S:$S,"q":$S,"n":{"x":[$S]}},"otel_dump":{"s":$S}}`
	end := `{"project_id":$P,"id":"c1","ended_at":` + later + `,"exception":$S,"output":{$S:$S,"o":$S},` +
		`"summary":{$S:$S,"usage":{$S:{"prompt_tokens":1,"completion_tokens":2}}}}`
	complete := strings.Replace(start, `"id":"c1"`, `"id":"c2"`, 1)
	complete = strings.TrimSuffix(complete, "}") + `,"ended_at":` + later + `,"output":$S,"summary":{$S:1}}`
	fb := `{"project_id":$P,"weave_ref":` + ref + `,"feedback_type":"custom","payload":{$S:$S,"q":$S}}`
	otlp := `{"resourceSpans":[{"resource":{"attributes":[{"key":"wandb.entity","value":{"stringValue":"acme"}},` +
		`{"key":"wandb.project","value":{"stringValue":"` + project[len("acme/"):] + `"}}]},"scopeSpans":[{"spans":[{` +
		`"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":$S,` +
		`"startTimeUnixNano":"1735689600000000000","endTimeUnixNano":"1735689601000000000","attributes":[` +
		`{"key":"input.value","value":{"stringValue":$J}},{"key":"output.value","value":{"stringValue":$J}},` +
		`{"key":$S,"value":{"stringValue":$S}}]}]}]}]}`
	reqs := fill(project, frag,
		request{"/call/start", `{"start":` + start + `}`},
		request{"/call/end", `{"end":` + end + `}`},
		request{"/call/upsert_batch", `{"batch":[{"mode":"start","req":{"start":` + strings.Replace(start, `"c1"`, `"c3"`, 1) +
			`}},{"mode":"end","req":{"end":` + strings.Replace(end, `"c1"`, `"c3"`, 1) + `}}]}`},
		request{"/v2/" + project + "/calls/complete", `{"batch":[` + complete + `]}`},
		request{"/call/update", `{"project_id":$P,"call_id":"c1","display_name":$S}`},
		request{"/call/start", `{"start":` + strings.Replace(start, `"id":"c1"`, `"id":$S`, 1) + `}`},
		request{"/obj/create", `{"obj":{"project_id":$P,"object_id":"o","val":{$S:$S,"v":[$S],"_type":$S}}}`},
		request{"/obj/create", `{"obj":{"project_id":$P,"object_id":$S,"val":$S}}`},
		request{"/table/create", `{"table":{"project_id":$P,"rows":[{$S:$S,"q":$S},{"q":1}]}}`},
		request{"/feedback/create", fb},
		request{"/feedback/create", `{"project_id":$P,"weave_ref":` + ref + `,"feedback_type":$S,"payload":{"q":1},"creator":$S}`},
		request{"/feedback/batch/create", `{"batch":[` + fb + `]}`},
		request{"/cost/create", `{"project_id":$P,"costs":{$S:{"prompt_token_cost":1,"completion_token_cost":2,"prompt_token_cost_unit":$S}}}`},
		request{"/otel/v1/traces", otlp},
		request{"/v2/" + project + "/ops", `{"name":$S,"source_code":$S}`},
		request{"/v2/" + project + "/predictions", `{"model":"weave:///acme/REF/object/m:abc","inputs":{$S:$S,"q":$S},"output":{$S:$S}}`},
		request{"/annotation_queues", `{"project_id":$P,"name":$S,"description":$S,"scorer_refs":[]}`},
	)
	for i := range reqs {
		reqs[i].body = strings.ReplaceAll(reqs[i].body, "REF", project[len("acme/"):])
	}
	return reqs
}

// queryBodies are well-formed queries of every kind that touch the JSON
// fields written: each must answer 200 whatever was stored. table is the
// digest of the table written, "" when it was refused.
func queryBodies(project, table string) []request {
	eq := func(field string) string {
		return `{"$expr":{"$eq":[{"$getField":"` + field + `"},{"$literal":"x"}]}}`
	}
	contains := func(field string) string {
		return `{"$expr":{"$contains":{"input":{"$getField":"` + field + `"},"substr":{"$literal":"x"},"case_insensitive":true}}}`
	}
	sort := func(fields ...string) string {
		parts := make([]string, len(fields))
		for i, f := range fields {
			parts[i] = `{"field":"` + f + `","direction":"desc"}`
		}
		return `[` + strings.Join(parts, ",") + `]`
	}
	calls := sort("inputs.q", "output.o", "attributes.a", "summary.usage", "feedback.[custom].payload.q")
	week := `"` + time.Now().UTC().Add(-7*24*time.Hour).Format(time.RFC3339) + `"`
	reqs := []request{
		{"/calls/stream_query", `{"project_id":$P,"query":` + eq("inputs.q") + `,"sort_by":` + calls + `}`},
		{"/calls/stream_query", `{"project_id":$P,"query":` + contains("output.o") + `,"include_costs":true,"include_feedback":true}`},
		{"/calls/stream_query", `{"project_id":$P,"query":` + eq("attributes.a") + `,"expand_columns":["inputs.q","output.o"]}`},
		{"/calls/stream_query", `{"project_id":$P,"query":` + contains("summary.usage") + `,"columns":["id","inputs.q"]}`},
		{"/calls/query", `{"project_id":$P,"query":` + contains("inputs.n.x") + `,"sort_by":` + calls + `,"limit":5}`},
		{"/calls/query_stats", `{"project_id":$P,"query":` + eq("inputs.q") + `}`},
		{"/calls/query_stats", `{"project_id":$P,"query":` + contains("output.o") + `,"include_total_storage_size":true}`},
		{"/call/read", `{"project_id":$P,"id":"c1","include_costs":true}`},
		{"/threads/stream_query", `{"project_id":$P}`},
		{"/feedback/query", `{"project_id":$P,"query":` + eq("payload.q") + `,"sort_by":` + sort("payload.q", "created_at") + `}`},
		{"/objs/query", `{"project_id":$P,"sort_by":[{"field":"created_at","direction":"desc"}]}`},
		{"/obj/read", `{"project_id":$P,"object_id":"o","digest":"latest"}`},
		{"/table/query_stats_batch", `{"project_id":$P,"digests":[]}`},
		{"/cost/query", `{"project_id":$P,"sort_by":[{"field":"llm_id","direction":"asc"}]}`},
		{"/files/stats", `{"project_id":$P}`},
		{"/calls/usage", `{"project_id":$P,"call_ids":["c1","c2"],"include_costs":true}`},
		{"/trace/usage", `{"project_id":$P,"filter":{"trace_ids":["t1"]},"include_costs":true}`},
		{"/project/stats", `{"project_id":$P}`},
		{"/feedback/stats", `{"project_id":$P,"start":` + week + `,"metrics":[{"json_path":"q","value_type":"categorical"}]}`},
		{"/feedback/payload_schema", `{"project_id":$P,"start":` + week + `}`},
		{"/annotation_queues/query", `{"project_id":$P}`},
	}
	if table != "" {
		rows := `{"project_id":$P,"digest":"` + table + `","sort_by":` + sort("q", "n") + `}`
		reqs = append(reqs, request{"/table/query", rows}, request{"/table/query_stream", rows},
			request{"/table/query_stats", `{"project_id":$P,"digest":"` + table + `"}`})
	}
	return fill(project, "", reqs...)
}

// queryBodiesWith are queries that carry the fragment itself: they may be
// refused (4xx), never fail.
func queryBodiesWith(project, frag string) []request {
	return fill(project, frag,
		request{"/calls/stream_query", `{"project_id":$P,"query":{"$expr":{"$eq":[{"$getField":"inputs.q"},{"$literal":$S}]}}}`},
		request{"/calls/stream_query", `{"project_id":$P,"sort_by":[{"field":$S,"direction":"asc"}]}`},
		request{"/calls/query_stats", `{"project_id":$P,"filter":{"op_names":[$S],"trace_ids":[$S]}}`},
		request{"/feedback/query", `{"project_id":$P,"query":{"$expr":{"$contains":{"input":{"$getField":"payload.q"},"substr":{"$literal":$S}}}}}`},
		request{"/objs/query", `{"project_id":$P,"filter":{"object_ids":[$S]}}`},
		request{"/table/query", `{"project_id":$P,"digest":$S,"sort_by":[{"field":$S,"direction":"asc"}]}`},
		request{"/calls/usage", `{"project_id":$P,"call_ids":[$S]}`},
		request{"/trace/usage", `{"project_id":$P,"query":{"$expr":{"$eq":[{"$getField":"inputs.q"},{"$literal":$S}]}}}`},
		request{"/feedback/stats", `{"project_id":$P,"start":"2026-01-01T00:00:00Z","end":"2026-01-02T00:00:00Z","metrics":[{"json_path":$S}]}`},
		request{"/annotation_queues/query", `{"project_id":$P,"name":$S}`},
	)
}
