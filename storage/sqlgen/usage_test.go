package sqlgen

import (
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
)

// usageFixtures are calls whose token and cost orders differ: u1 has many
// cheap tokens, u2 few dear ones, u3 splits over two models (one without
// a price), u4 has no usage, u5 only an unpriced model, u6 cached input.
func usageFixtures() []call {
	c := func(id string, d time.Duration, summary string) call {
		return call{project: "e/p", id: id, trace: "t" + id, op: "op", started: at(d), summary: summary}
	}
	return []call{
		c("u1", 1*time.Hour, `{"usage": {"cheap": {"prompt_tokens": 1000, "completion_tokens": 500}}}`),
		c("u2", 2*time.Hour, `{"usage": {"dear": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}}`),
		c("u3", 3*time.Hour, `{"usage": {"cheap": {"prompt_tokens": 100}, "nameless": {"total_tokens": 9000}}}`),
		c("u4", 4*time.Hour, `{"status_counts": {"success": 1}}`),
		c("u5", 5*time.Hour, `{"usage": {"nameless": {"prompt_tokens": 7, "completion_tokens": "x"}}}`),
		c("u6", 6*time.Hour, `{"usage": {"dear": {"prompt_tokens": 100, "cache_read_input_tokens": 100}}}`),
		{project: "e/other", id: "x1", trace: "tx", op: "op", started: at(time.Hour), summary: `{"usage": {"dear": {"prompt_tokens": 1e9}}}`},
	}
}

// usagePrices: cheap 0.001 a token; dear 1 a prompt token, 2 a
// completion token, 0.5 a cached one, until a project price of 0.0001
// from 5h on.
func usagePrices() []pricing.Price {
	return []pricing.Price{
		{ID: "c", LLMID: "cheap", Level: pricing.LevelDefault, EffectiveDate: base, PromptTokenCost: 0.001, CompletionTokenCost: 0.001},
		{ID: "d", LLMID: "dear", Level: pricing.LevelDefault, EffectiveDate: base, PromptTokenCost: 1, CompletionTokenCost: 2, CacheReadInputTokenCost: 0.5},
		{ID: "p", LLMID: "dear", Level: pricing.LevelProject, EffectiveDate: at(5 * time.Hour), PromptTokenCost: 0.0001, CompletionTokenCost: 0.0001},
	}
}

func usageCases() []idCase {
	return []idCase{
		// tokens: u3 9100, u1 1500, u6 100, u2 15, u5 7, u4 none.
		{name: "tokens desc", sortBy: sortBy("summary.weave.total_tokens", "desc"), want: []string{"u3", "u1", "u6", "u2", "u5", "u4"}},
		{name: "tokens asc, no usage last", sortBy: sortBy("summary.weave.total_tokens", "asc"), want: []string{"u5", "u2", "u6", "u1", "u3", "u4"}},
		// cost: u2 20, u1 1.5, u3 0.1, u6 0 (project price, all cached),
		// u5 0 (no price), u4 none; ties by id desc.
		{name: "cost desc", sortBy: sortBy("summary.weave.cost", "desc"), want: []string{"u2", "u1", "u3", "u6", "u5", "u4"}},
		{name: "cost asc", sortBy: sortBy("summary.weave.cost", "asc"), want: []string{"u6", "u5", "u3", "u1", "u2", "u4"}},
		{name: "tokens filter", where: `{"$gt": [{"$getField": "summary.weave.total_tokens"}, {"$literal": 100}]}`, want: []string{"u1", "u3"}},
	}
}

func runUsageCases(t *testing.T, e engine) {
	for _, tc := range usageCases() {
		t.Run(tc.name, func(t *testing.T) {
			q := storage.CallsQuery{ProjectID: "e/p", SortBy: tc.sortBy, Prices: usagePrices(), Limit: 10}
			if tc.where != "" {
				q.Where = where(tc.where)
			}
			st, err := CallsSelect(e.d, q)
			if err != nil {
				t.Fatalf("CallsSelect: %v", err)
			}
			if got := e.ids(t, st); !slices.Equal(got, tc.want) {
				t.Errorf("got %v; want %v\nSQL: %s", got, tc.want, st.SQL)
			}
		})
	}
}

func TestUsageSort(t *testing.T) {
	db := openDB(t)
	insertCalls(t, db, usageFixtures())
	runUsageCases(t, duckDBEngine(db))
}

func TestClickHouseUsageSort(t *testing.T) {
	runUsageCases(t, clickHouseEngine(openCH(t, usageFixtures(), nil)))
}

// spanFixtures price one model three ways over time (1, then 10 from 2h,
// then 100 from 4h) for calls whose token order is the reverse of their
// cost order; pricing any call at another span reorders them.
func spanFixtures() ([]call, []pricing.Price) {
	c := func(id string, d time.Duration, tokens string) call {
		return call{project: "e/p", id: id, trace: "t" + id, op: "op", started: at(d),
			summary: `{"usage": {"m": {"prompt_tokens": ` + tokens + `}}}`}
	}
	p := func(id string, d time.Duration, level string, cost float64) pricing.Price {
		return pricing.Price{ID: id, LLMID: "m", Level: level, EffectiveDate: at(d), PromptTokenCost: cost}
	}
	calls := []call{c("s1", time.Hour, "30"), c("s2", 3*time.Hour, "4"), c("s3", 5*time.Hour, "1")}
	prices := []pricing.Price{p("a", 0, pricing.LevelDefault, 1), p("b", 2*time.Hour, pricing.LevelProject, 10),
		p("c", 4*time.Hour, pricing.LevelProject, 100), p("z", 0, pricing.LevelDefault, 5)}
	prices[3].LLMID = "other"
	return calls, prices
}

func runSpanCases(t *testing.T, e engine, prices []pricing.Price) {
	q := storage.CallsQuery{ProjectID: "e/p", SortBy: sortBy("summary.weave.cost", "desc"), Prices: prices, Limit: 10}
	st, err := CallsSelect(e.d, q)
	if err != nil {
		t.Fatalf("CallsSelect: %v", err)
	}
	// s3 costs 100, s2 40, s1 30.
	if got, want := e.ids(t, st), []string{"s3", "s2", "s1"}; !slices.Equal(got, want) {
		t.Errorf("got %v; want %v\nSQL: %s", got, want, st.SQL)
	}
}

func TestUsageSortSpans(t *testing.T) {
	db := openDB(t)
	calls, prices := spanFixtures()
	insertCalls(t, db, calls)
	runSpanCases(t, duckDBEngine(db), prices)
}

func TestClickHouseUsageSortSpans(t *testing.T) {
	calls, prices := spanFixtures()
	runSpanCases(t, clickHouseEngine(openCH(t, calls, nil)), prices)
}

// typeUsage fills the typed usage columns of the calls with one model (or
// none) as the DuckDB store writes them: the typed reading of cost.
func typeUsage(t *testing.T, db *sql.DB) {
	t.Helper()
	const typed = `UPDATE calls SET usage_models = len(json_keys(summary, '$.usage')),
		usage_model = json_keys(summary, '$.usage')[1],
		usage_prompt = coalesce(TRY_CAST(json_extract_string(summary, '$.usage.*.prompt_tokens')[1] AS DOUBLE), 0) +
			coalesce(TRY_CAST(json_extract_string(summary, '$.usage.*.input_tokens')[1] AS DOUBLE), 0),
		usage_completion = coalesce(TRY_CAST(json_extract_string(summary, '$.usage.*.completion_tokens')[1] AS DOUBLE), 0) +
			coalesce(TRY_CAST(json_extract_string(summary, '$.usage.*.output_tokens')[1] AS DOUBLE), 0),
		usage_total = coalesce(TRY_CAST(json_extract_string(summary, '$.usage.*.total_tokens')[1] AS DOUBLE), 0),
		usage_cache_read = coalesce(TRY_CAST(json_extract_string(summary, '$.usage.*.cache_read_input_tokens')[1] AS DOUBLE), 0),
		usage_cache_create = 0
		WHERE json_keys(summary, '$.usage') IS NOT NULL AND len(json_keys(summary, '$.usage')) <= 1
			AND id <> 'u5'`
	for _, stmt := range []string{typed, "UPDATE calls SET usage_models = 0 WHERE json_extract(summary, '$.usage') IS NULL"} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	var typedRows int
	if err := db.QueryRow("SELECT count(*) FROM calls WHERE usage_models = 1").Scan(&typedRows); err != nil || typedRows == 0 {
		t.Fatalf("typed rows: %d, %v", typedRows, err)
	}
}

// TestCostModels holds a cost priced with CostModels' constants to the
// lookup's: for the models named, for those not named, and over a
// model's three price spans.
func TestCostModels(t *testing.T) {
	usage := openDB(t)
	insertCalls(t, usage, usageFixtures())
	typeUsage(t, usage)
	spans := openDB(t)
	calls, prices := spanFixtures()
	insertCalls(t, spans, calls)
	typeUsage(t, spans)
	for _, models := range [][]string{nil, {"cheap"}, {"dear", "cheap", "nameless"}, {"m"}, {"other", "m"}} {
		for _, tc := range usageCases() {
			q := storage.CallsQuery{ProjectID: "e/p", SortBy: tc.sortBy, Prices: usagePrices(), Limit: 10}
			if tc.where != "" {
				q.Where = where(tc.where)
			}
			st, err := CallsSelect(DuckDB{}, q, CostModels(models))
			if err != nil {
				t.Fatalf("CallsSelect: %v", err)
			}
			if got := duckDBEngine(usage).ids(t, st); !slices.Equal(got, tc.want) {
				t.Errorf("%v %s: got %v; want %v\nSQL: %s", models, tc.name, got, tc.want, st.SQL)
			}
		}
		q := storage.CallsQuery{ProjectID: "e/p", SortBy: sortBy("summary.weave.cost", "desc"), Prices: prices, Limit: 10}
		st, err := CallsSelect(DuckDB{}, q, CostModels(models))
		if err != nil {
			t.Fatalf("CallsSelect: %v", err)
		}
		if got, want := duckDBEngine(spans).ids(t, st), []string{"s3", "s2", "s1"}; !slices.Equal(got, want) {
			t.Errorf("%v spans: got %v; want %v\nSQL: %s", models, got, want, st.SQL)
		}
	}
}
