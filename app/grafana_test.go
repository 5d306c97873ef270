package app_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrapedSeries indexes a scrape by series name (a histogram family gives
// name_bucket, name_sum and name_count): the label names and the values
// seen for each.
type scrapedSeries map[string]map[string]map[string]bool

func indexScrape(t *testing.T, body []byte) scrapedSeries {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse scrape: %v", err)
	}
	out := scrapedSeries{}
	add := func(name string, m *dto.Metric, extra ...string) {
		labels := out[name]
		if labels == nil {
			labels = map[string]map[string]bool{}
			out[name] = labels
		}
		for _, l := range m.GetLabel() {
			if labels[l.GetName()] == nil {
				labels[l.GetName()] = map[string]bool{}
			}
			labels[l.GetName()][l.GetValue()] = true
		}
		for _, l := range extra {
			if labels[l] == nil {
				labels[l] = map[string]bool{}
			}
		}
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetType() == dto.MetricType_HISTOGRAM {
				add(name+"_bucket", m, "le")
				add(name+"_sum", m)
				add(name+"_count", m)
				continue
			}
			add(name, m)
		}
	}
	return out
}

// labelValuesQuery is a Grafana variable query: label_values(selector, label).
var labelValuesQuery = regexp.MustCompile(`^label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// TestGrafanaDashboardQueriesMatchScrape reads every query of the shipped
// dashboard and checks it against what an admin scrape of a weft with a
// few calls returns: every metric it selects exists with samples, every
// label it matches or groups by is on those series, and every literal
// label value it matches on was seen.
func TestGrafanaDashboardQueriesMatchScrape(t *testing.T) {
	raw, err := os.ReadFile("../examples/grafana/weft-trace-metrics.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}

	e := newEnv(t, withTraceMetrics)
	writeTraceMetricsCalls(e)
	status, _, body := e.do(http.MethodGet, "/metrics", e.admin, nil)
	if status != http.StatusOK {
		t.Fatalf("admin /metrics = %d", status)
	}
	series := indexScrape(t, body)

	check := func(where, expr string, extraLabels ...string) {
		refs, err := parsePromQL(expr)
		if err != nil {
			t.Errorf("%s: %q: %v", where, expr, err)
			return
		}
		if len(refs.selectors) == 0 {
			t.Errorf("%s: %q selects no metric", where, expr)
		}
		known := map[string]bool{}
		for _, sel := range refs.selectors {
			labels, ok := series[sel.metric]
			if !ok {
				t.Errorf("%s: %q selects %s, which a scrape does not have", where, expr, sel.metric)
				continue
			}
			for l := range labels {
				known[l] = true
			}
			for _, m := range sel.matchers {
				values, ok := labels[m.label]
				if !ok {
					t.Errorf("%s: %s has no label %s", where, sel.metric, m.label)
					continue
				}
				if m.op == "=" && !strings.Contains(m.value, "$") && !values[m.value] {
					t.Errorf("%s: %s{%s=%q} matches no scraped series", where, sel.metric, m.label, m.value)
				}
			}
		}
		for _, l := range append(refs.grouping, extraLabels...) {
			if !known[l] {
				t.Errorf("%s: %q groups by %s, a label none of its series has", where, expr, l)
			}
		}
	}

	queries := 0
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			check("panel "+p.Title, target.Expr)
			queries++
		}
	}
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("variable %s: %v", v.Name, err)
		}
		m := labelValuesQuery.FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(selector, label)", v.Name, q.Query)
			continue
		}
		check("variable "+v.Name, m[1], m[2])
		queries++
	}
	if queries < 10 {
		t.Fatalf("only %d queries found in the dashboard", queries)
	}
	for _, name := range []string{"weft_app_calls_total", "weft_app_call_duration_seconds_bucket", "weft_app_tokens_total",
		"weft_app_cost_usd_total", "weft_app_series_overflow_total"} {
		used := false
		for _, p := range dash.Panels {
			for _, target := range p.Targets {
				used = used || strings.Contains(target.Expr, name)
			}
		}
		if !used {
			t.Errorf("the dashboard charts no %s", name)
		}
	}
}
