package e2e

import (
	"fmt"
	"maps"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"
)

const rulesFile = "../deploy/prometheus/weft-rules.yaml"

// scaleOutOnly are metrics a single node does not export: the rules that
// use them are evaluated on series made in their image.
var scaleOutOnly = map[string]bool{"weft_kafka_consumer_lag": true, "weft_kafka_dead_lettered_records": true}

// TestAlertRulesOnAScrapedWeft loads deploy/prometheus/weft-rules.yaml with
// Prometheus' own promtool and evaluates it against series scraped from a
// running weft that took writes: as scraped, no rule fires; with one
// metric of the scrape turned bad at a time (its real name and labels),
// exactly the rule meant for it fires, with its labels and annotations.
// Every metric of Weft's a rule names must be in the scrape, so a renamed
// metric fails here instead of silencing an alert.
func TestAlertRulesOnAScrapedWeft(t *testing.T) {
	promtool := toolBinary(t, "WEFT_PROMTOOL", "install-promtool.sh")
	rulesPath, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", rulesPath).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	rules := readAlertRules(t)

	p := startWeft(t, t.TempDir())
	_, body := upsertBody("acme/alerts", "a", 20)
	newClient(t, p.URL, p.AdminKey).mustPost("/call/upsert_batch", body, nil)
	sendSpansTo(t, p.URL, p.AdminKey, "acme/alerts", 5)
	families := scrapeFamilies(t, p.URL+"/metrics")

	for _, r := range rules {
		for _, name := range regexp.MustCompile(`\b(?:weft|otelcol)_[a-z_]+`).FindAllString(r.Expr, -1) {
			family := strings.TrimSuffix(name, "_bucket")
			if _, ok := families[family]; !ok && !scaleOutOnly[family] {
				t.Errorf("rule %s uses %s, which weft does not export", r.Alert, name)
			}
		}
	}

	base := seriesOf(t, families)
	capacity := base.value(t, `weft_exporter_queue_capacity_bytes{exporter="storage"`)
	weft := map[string]string{"job": "weft", "instance": "weft-0"}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := maps.Clone(m)
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	scenarios := []struct {
		alert  string
		bad    func(s series) string // new values for a series it turns bad, else ""
		labels map[string]string     // the alert's labels
	}{
		{"WeftDown", func(s series) string { return ifName(s, "up", "0+0x40") }, weft},
		{"WeftWritesRefused", func(s series) string {
			return ifName(s, "weft_receiver_refused_calls", "0+10x40")
		}, weft},
		{"WeftWriteBacklogFilling", func(s series) string {
			if s.name == "weft_exporter_queue_bytes" && s.labels["exporter"] == "storage" {
				return fmt.Sprintf("%s+0x40", fmtValue(0.9*capacity))
			}
			return ""
		}, with(weft, "exporter", "storage")},
		{"WeftCallsSetAside", func(s series) string { return ifName(s, "weft_storage_rejected_calls", "0+1x40") }, with(weft, "backend", "duckdb")},
		{"WeftStoreWritesSlow", func(s series) string {
			// Every write from now on lands above 30 s.
			if s.name == "weft_storage_write_duration_seconds_bucket" {
				if le, _ := strconv.ParseFloat(s.labels["le"], 64); le > 30 {
					return fmt.Sprintf("%s+100x40", fmtValue(s.value))
				}
			}
			return ifName(s, "weft_storage_write_duration_seconds_count", fmt.Sprintf("%s+100x40", fmtValue(s.value)))
		}, weft},
		{"WeftKafkaConsumerLagging", func(s series) string { return ifName(s, "weft_kafka_consumer_lag", "2000000+0x40") },
			map[string]string{"job": "weft", "topic": "weft.calls"}},
		{"WeftKafkaDeadLetters", func(s series) string { return ifName(s, "weft_kafka_dead_lettered_records", "0+1x40") }, weft},
		{"WeftWebhookDeliveriesFailing", func(s series) string {
			return ifName(s, "weft_automations_deliveries_failed", "0+1x40")
		}, weft},
		{"WeftDataVolumeFilling", func(s series) string {
			return ifName(s, "kubelet_volume_stats_available_bytes", "5000000000+0x40")
		}, map[string]string{"job": "kubelet", "persistentvolumeclaim": "data-weft-0"}},
	}
	covered := map[string]bool{}
	tests := []promtoolTest{base.test(rules, "", nil, nil)}
	for _, sc := range scenarios {
		covered[sc.alert] = true
		tests = append(tests, base.test(rules, sc.alert, sc.bad, sc.labels))
	}
	for _, r := range rules {
		if !covered[r.Alert] {
			t.Errorf("rule %s has no scenario that makes it fire", r.Alert)
		}
	}
	spec, err := yaml.Marshal(map[string]any{"rule_files": []string{rulesPath}, "evaluation_interval": "1m", "tests": tests})
	if err != nil {
		t.Fatal(err)
	}
	specPath := filepath.Join(t.TempDir(), "weft-rules.test.yaml")
	if err := os.WriteFile(specPath, spec, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "test", "rules", specPath).CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}

// alertRule is one rule of the rules file.
type alertRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func readAlertRules(t *testing.T) []alertRule {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var rules []alertRule
	for _, g := range f.Groups {
		rules = append(rules, g.Rules...)
	}
	if len(rules) == 0 {
		t.Fatal("no rules")
	}
	return rules
}

func scrapeFamilies(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

// series is one input series of a promtool test.
type series struct {
	name   string
	labels map[string]string
	value  float64
}

func (s series) String() string {
	keys := slices.Sorted(maps.Keys(s.labels))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Quote(s.labels[k])
	}
	return s.name + "{" + strings.Join(parts, ",") + "}"
}

type seriesSet []series

// seriesOf flattens the scrape into series labelled as Prometheus would
// store them (job and instance added), plus the series a single node does
// not export: up, the scale-out Kafka metrics and the kubelet's volume
// statistics.
func seriesOf(t *testing.T, families map[string]*dto.MetricFamily) seriesSet {
	t.Helper()
	target := map[string]string{"job": "weft", "instance": "weft-0"}
	var out seriesSet
	add := func(name string, m *dto.Metric, extra map[string]string, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		labels := maps.Clone(target)
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		maps.Copy(labels, extra)
		out = append(out, series{name: name, labels: labels, value: v})
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				add(name, m, nil, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(name, m, nil, m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add(name, m, nil, m.GetUntyped().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					add(name+"_bucket", m, map[string]string{"le": fmtValue(b.GetUpperBound())}, float64(b.GetCumulativeCount()))
				}
				add(name+"_bucket", m, map[string]string{"le": "+Inf"}, float64(h.GetSampleCount()))
				add(name+"_sum", m, nil, h.GetSampleSum())
				add(name+"_count", m, nil, float64(h.GetSampleCount()))
			}
		}
	}
	out = append(out,
		series{name: "up", labels: target, value: 1},
		series{name: "weft_kafka_consumer_lag", labels: map[string]string{"job": "weft", "instance": "weft-process-0", "topic": "weft.calls"}, value: 120},
		series{name: "weft_kafka_dead_lettered_records", labels: target, value: 0},
		series{name: "kubelet_volume_stats_available_bytes", labels: map[string]string{"job": "kubelet", "persistentvolumeclaim": "data-weft-0"}, value: 60e9},
		series{name: "kubelet_volume_stats_capacity_bytes", labels: map[string]string{"job": "kubelet", "persistentvolumeclaim": "data-weft-0"}, value: 100e9},
	)
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// value is the value of the one series whose text starts with prefix.
func (ss seriesSet) value(t *testing.T, prefix string) float64 {
	t.Helper()
	for _, s := range ss {
		if strings.HasPrefix(s.String(), prefix) {
			return s.value
		}
	}
	t.Fatalf("no series %s in the scrape", prefix)
	return 0
}

// promtoolTest is one entry of a promtool rule test file.
type promtoolTest struct {
	Interval   string          `yaml:"interval"`
	Input      []promtoolInput `yaml:"input_series"`
	AlertTests []promtoolAlert `yaml:"alert_rule_test"`
}

type promtoolInput struct {
	Series string `yaml:"series"`
	Values string `yaml:"values"`
}

type promtoolAlert struct {
	EvalTime string             `yaml:"eval_time"`
	Name     string             `yaml:"alertname"`
	Expected []promtoolExpected `yaml:"exp_alerts"`
}

type promtoolExpected struct {
	Labels      map[string]string `yaml:"exp_labels"`
	Annotations map[string]string `yaml:"exp_annotations"`
}

// test is a promtool test over 40 minutes of the series, with bad's
// changes, expecting alert (when not empty) to fire at 30m with labels and
// every other rule to stay silent.
func (ss seriesSet) test(rules []alertRule, alert string, bad func(series) string, labels map[string]string) promtoolTest {
	pt := promtoolTest{Interval: "1m"}
	for _, s := range ss {
		values := fmt.Sprintf("%s+0x40", fmtValue(s.value))
		if bad != nil {
			if v := bad(s); v != "" {
				values = v
			}
		}
		pt.Input = append(pt.Input, promtoolInput{Series: s.String(), Values: values})
	}
	for _, r := range rules {
		at := promtoolAlert{EvalTime: "30m", Name: r.Alert, Expected: []promtoolExpected{}}
		if r.Alert == alert {
			l := maps.Clone(labels)
			maps.Copy(l, r.Labels)
			at.Expected = append(at.Expected, promtoolExpected{Labels: l, Annotations: r.Annotations})
		}
		pt.AlertTests = append(pt.AlertTests, at)
	}
	return pt
}

func ifName(s series, name, values string) string {
	if s.name == name {
		return values
	}
	return ""
}

// fmtValue writes v as promtool's series notation reads it: no exponent,
// whose "+" would read as the notation's own.
func fmtValue(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// toolBinary returns a tool an install script builds: env (scripts/test.sh
// sets it), else the script's cached build. CI must set env.
func toolBinary(t *testing.T, env, script string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is unset: scripts/test.sh exports it from scripts/%s", env, script)
	}
	out, err := exec.Command("../scripts/" + script).Output()
	if err != nil {
		t.Fatalf("scripts/%s: %v", script, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}
