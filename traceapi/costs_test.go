package traceapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestCostCreateQueryPurge(t *testing.T) {
	e := newStoreEnv(t)
	before := time.Now().UTC().Add(-time.Second)
	out := e.expectStatus(t, "/cost/create", `{"project_id":"acme/p","costs":{
		"zeta-model":{"prompt_token_cost":0.001,"completion_token_cost":0.002},
		"alpha-model":{"prompt_token_cost":0.003,"completion_token_cost":0.004,"cache_read_input_token_cost":0.0001,
			"effective_date":"2024-01-02T03:04:05Z","provider_id":"acme-ai","prompt_token_cost_unit":"EUR","ignored":1}}}`, http.StatusOK)
	ids := out["ids"].([]any)
	if len(ids) != 2 {
		t.Fatalf("ids %v", out)
	}
	// Cost id first, llm id second, in request order.
	zeta, alpha := ids[0].([]any), ids[1].([]any)
	if zeta[1] != "zeta-model" || alpha[1] != "alpha-model" || zeta[0] == "" {
		t.Fatalf("ids %v, want [[id, zeta-model], [id, alpha-model]]", ids)
	}

	res := e.expectStatus(t, "/cost/query", `{"project_id":"acme/p","sort_by":[{"field":"llm_id","direction":"asc"}]}`, http.StatusOK)
	rows := res["results"].([]any)
	if len(rows) != 2 {
		t.Fatalf("query %v", res)
	}
	a, z := rows[0].(map[string]any), rows[1].(map[string]any)
	if a["id"] != alpha[0] || a["provider_id"] != "acme-ai" || a["prompt_token_cost_unit"] != "EUR" ||
		a["completion_token_cost_unit"] != "USD" || a["effective_date"] != "2024-01-02T03:04:05Z" || a["cache_read_input_token_cost"] != 0.0001 {
		t.Fatalf("alpha row %v", a)
	}
	eff, err := time.Parse(time.RFC3339Nano, z["effective_date"].(string))
	if err != nil || eff.Before(before) || z["provider_id"] != "default" || z["cache_creation_input_token_cost"] != 0.0 {
		t.Fatalf("zeta row %v: defaults not applied", z)
	}

	checkCostPurge(t, e, zeta[0].(string))
}

// checkCostPurge expects prices of zeta-model (id zetaID) and alpha-model.
func checkCostPurge(t *testing.T, e *storeEnv, zetaID string) {
	t.Helper()
	proj := e.expectStatus(t, "/cost/query", `{"project_id":"acme/p","fields":["llm_id"],
		"query":{"$expr":{"$gte":[{"$getField":"prompt_token_cost"},{"$literal":0.002}]}}}`, http.StatusOK)
	if fmt.Sprint(proj["results"]) != "[map[llm_id:alpha-model]]" {
		t.Fatalf("filtered projection %v", proj["results"])
	}
	if other := e.expectStatus(t, "/cost/query", `{"project_id":"acme/q"}`, http.StatusOK); len(other["results"].([]any)) != 0 {
		t.Fatalf("project acme/q sees acme/p's prices: %v", other)
	}

	bad := e.expectStatus(t, "/cost/purge", `{"project_id":"acme/p","query":{"$expr":{"$eq":[{"$getField":"llm_id"},{"$literal":"zeta-model"}]}}}`, http.StatusBadRequest)
	if !strings.Contains(fmt.Sprint(bad["reason"]), "Can only purge costs by specifying one or more cost ids") {
		t.Fatalf("purge by llm_id answer %v", bad)
	}
	e.expectStatus(t, "/cost/purge", fmt.Sprintf(`{"project_id":"acme/p","query":{"$expr":{"$in":[{"$getField":"id"},[{"$literal":%q}]]}}}`, zetaID), http.StatusOK)
	left := e.expectStatus(t, "/cost/query", `{"project_id":"acme/p","fields":["llm_id"]}`, http.StatusOK)
	if fmt.Sprint(left["results"]) != "[map[llm_id:alpha-model]]" {
		t.Fatalf("after purge: %v", left["results"])
	}
}

func TestCostCreateRejects(t *testing.T) {
	e := newStoreEnv(t)
	cases := []struct {
		name, body string
		want       int
	}{
		{"missing prompt cost", `{"project_id":"acme/p","costs":{"m":{"completion_token_cost":1}}}`, 422},
		{"negative cost", `{"project_id":"acme/p","costs":{"m":{"prompt_token_cost":-1,"completion_token_cost":1}}}`, 400},
		{"cost as text", `{"project_id":"acme/p","costs":{"m":{"prompt_token_cost":"cheap","completion_token_cost":1}}}`, 422},
		{"costs not an object", `{"project_id":"acme/p","costs":[1]}`, 422},
		{"empty costs", `{"project_id":"acme/p","costs":{}}`, 400},
		{"bad effective_date", `{"project_id":"acme/p","costs":{"m":{"prompt_token_cost":1,"completion_token_cost":1,"effective_date":"soon"}}}`, 422},
		{"missing costs", `{"project_id":"acme/p"}`, 422},
		{"llm_id not UTF-8", "{\"project_id\":\"acme/p\",\"costs\":{\"m\xff\":{\"prompt_token_cost\":1,\"completion_token_cost\":1}}}", 422},
		{"unknown top-level field", `{"project_id":"acme/p","costs":{},"extra":true}`, 422},
		{"other entity", `{"project_id":"other/p","costs":{"m":{"prompt_token_cost":1,"completion_token_cost":1}}}`, 403},
	}
	for _, c := range cases {
		if code, out := e.postJSON(t, "/cost/create", c.body); code != c.want {
			t.Errorf("%s: status %d (%v), want %d", c.name, code, out, c.want)
		}
	}
	e.expectStatus(t, "/cost/query", `{"project_id":"acme/p","fields":["created_by"]}`, http.StatusBadRequest)
	e.expectStatus(t, "/cost/query", `{"project_id":"acme/p","limit":-5}`, http.StatusBadRequest)
	e.expectStatus(t, "/cost/purge", `{"project_id":"acme/p","query":{"$expr":{"$or":[{"$eq":[{"$getField":"id"},{"$literal":"a"}]},{"$gt":[{"$getField":"id"},{"$literal":"b"}]}]}}}`, http.StatusBadRequest)
}
