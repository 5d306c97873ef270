package app_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// promqlRefs is what a PromQL expression takes from the scraped series:
// the selectors (a metric name and its label matchers) and the label
// names of grouping clauses (by, without, on, ignoring, group_left,
// group_right). The prometheus parser is not in weft's module graph; this
// tokenizer reads just enough of the language for a dashboard's queries
// to be checked against a scrape.
type promqlRefs struct {
	selectors []promqlSelector
	grouping  []string
}

type promqlSelector struct {
	metric   string
	matchers []promqlMatcher
}

type promqlMatcher struct{ label, op, value string }

var (
	// promqlAggregators may be followed by a grouping clause instead of
	// their argument list.
	promqlAggregators = set("sum", "avg", "count", "min", "max", "group", "stddev", "stdvar",
		"topk", "bottomk", "quantile", "count_values", "limitk", "limit_ratio")
	promqlGrouping = set("by", "without", "on", "ignoring", "group_left", "group_right")
	promqlKeywords = set("and", "or", "unless", "bool", "offset", "atan2", "inf", "nan")
)

func set(words ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words {
		m[w] = true
	}
	return m
}

// parsePromQL reads the metric names, label matchers and grouping labels
// of expr. Grafana's variables ($project, ${op}, $__rate_interval) are
// skipped where they stand for a value or a duration.
func parsePromQL(expr string) (promqlRefs, error) {
	p := &promqlTokenizer{s: expr}
	var refs promqlRefs
	for {
		p.ws()
		if p.i >= len(p.s) {
			return refs, nil
		}
		c := p.s[p.i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if _, err := p.str(); err != nil {
				return refs, err
			}
		case c == '[': // a range or subquery: durations and variables only
			end := strings.IndexByte(p.s[p.i:], ']')
			if end < 0 {
				return refs, fmt.Errorf("unclosed [ at %d", p.i)
			}
			p.i += end + 1
		case c == '$':
			p.variable()
		case c == '{': // a selector without a metric name
			m, err := p.matchers()
			if err != nil {
				return refs, err
			}
			refs.selectors = append(refs.selectors, promqlSelector{matchers: m})
		case isIdentStart(c):
			word := p.ident()
			p.ws()
			next := byte(0)
			if p.i < len(p.s) {
				next = p.s[p.i]
			}
			switch {
			case promqlGrouping[word]:
				if next != '(' {
					if word == "group_left" || word == "group_right" {
						continue // the label list is optional there
					}
					return refs, fmt.Errorf("%s without a label list", word)
				}
				labels, err := p.labelList()
				if err != nil {
					return refs, err
				}
				refs.grouping = append(refs.grouping, labels...)
			case promqlAggregators[word] || promqlKeywords[strings.ToLower(word)] || next == '(':
				// a function, an aggregation or an operator: its
				// arguments are read as they come
			default:
				sel := promqlSelector{metric: word}
				if next == '{' {
					m, err := p.matchers()
					if err != nil {
						return refs, err
					}
					sel.matchers = m
				}
				refs.selectors = append(refs.selectors, sel)
			}
		case c >= '0' && c <= '9' || c == '.':
			for p.i < len(p.s) && (isIdentChar(p.s[p.i]) || p.s[p.i] == '.') {
				p.i++ // a number or a duration (5m, 1e3)
			}
		default:
			p.i++ // an operator or a parenthesis
		}
	}
}

type promqlTokenizer struct {
	s string
	i int
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || ('0' <= c && c <= '9') }

func (p *promqlTokenizer) ws() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *promqlTokenizer) ident() string {
	start := p.i
	for p.i < len(p.s) && isIdentChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// str reads a quoted string at the cursor and returns its contents.
func (p *promqlTokenizer) str() (string, error) {
	quote := p.s[p.i]
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '\\' && quote != '`' && p.i+1 < len(p.s):
			b.WriteByte(p.s[p.i+1])
			p.i += 2
			continue
		case c == quote:
			p.i++
			return b.String(), nil
		}
		b.WriteByte(c)
		p.i++
	}
	return "", fmt.Errorf("unclosed string at %d", p.i)
}

// variable skips a Grafana variable: $name or ${name...}.
func (p *promqlTokenizer) variable() {
	p.i++
	if p.i < len(p.s) && p.s[p.i] == '{' {
		if end := strings.IndexByte(p.s[p.i:], '}'); end >= 0 {
			p.i += end + 1
			return
		}
	}
	p.ident()
}

// matchers reads {label op "value", ...} at the cursor.
func (p *promqlTokenizer) matchers() ([]promqlMatcher, error) {
	p.i++ // {
	var out []promqlMatcher
	for {
		p.ws()
		if p.i >= len(p.s) {
			return nil, fmt.Errorf("unclosed {")
		}
		switch c := p.s[p.i]; {
		case c == '}':
			p.i++
			return out, nil
		case c == ',':
			p.i++
			continue
		case !isIdentStart(c):
			return nil, fmt.Errorf("unexpected %q in a selector at %d", c, p.i)
		}
		m := promqlMatcher{label: p.ident()}
		p.ws()
		for _, op := range []string{"!=", "=~", "!~", "="} {
			if strings.HasPrefix(p.s[p.i:], op) {
				m.op = op
				p.i += len(op)
				break
			}
		}
		if m.op == "" {
			return nil, fmt.Errorf("label %s has no match operator", m.label)
		}
		p.ws()
		if p.i >= len(p.s) || strings.IndexByte("\"'`", p.s[p.i]) < 0 {
			return nil, fmt.Errorf("label %s has no quoted value", m.label)
		}
		v, err := p.str()
		if err != nil {
			return nil, err
		}
		m.value = v
		out = append(out, m)
	}
}

// labelList reads (label, ...) at the cursor.
func (p *promqlTokenizer) labelList() ([]string, error) {
	p.i++ // (
	var out []string
	for {
		p.ws()
		if p.i >= len(p.s) {
			return nil, fmt.Errorf("unclosed label list")
		}
		switch c := p.s[p.i]; {
		case c == ')':
			p.i++
			return out, nil
		case c == ',':
			p.i++
		case isIdentStart(c):
			out = append(out, p.ident())
		default:
			return nil, fmt.Errorf("unexpected %q in a label list at %d", c, p.i)
		}
	}
}

func TestParsePromQL(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want promqlRefs
	}{
		{`histogram_quantile(0.95, sum by (le, op) (rate(weft_app_call_duration_seconds_bucket{project=~"$project", op!="a\"b"}[$__rate_interval])))`,
			promqlRefs{selectors: []promqlSelector{{metric: "weft_app_call_duration_seconds_bucket",
				matchers: []promqlMatcher{{"project", "=~", "$project"}, {"op", "!=", `a"b`}}}}, grouping: []string{"le", "op"}}},
		{`sum(rate(a_total[5m])) without (kind) / on(project) group_left(model) b{x='1'} offset 1h > bool 0.5 and c`,
			promqlRefs{selectors: []promqlSelector{{metric: "a_total"}, {metric: "b", matchers: []promqlMatcher{{"x", "=", "1"}}}, {metric: "c"}},
				grouping: []string{"kind", "project", "model"}}},
		{`sort_desc(sum by (project) (increase(cost_total{project=~"${project:regex}"}[$__range]))) * 1e3`,
			promqlRefs{selectors: []promqlSelector{{metric: "cost_total", matchers: []promqlMatcher{{"project", "=~", "${project:regex}"}}}},
				grouping: []string{"project"}}},
		{`{__name__="up", job!~"x|y"}`,
			promqlRefs{selectors: []promqlSelector{{matchers: []promqlMatcher{{"__name__", "=", "up"}, {"job", "!~", "x|y"}}}}}},
	} {
		got, err := parsePromQL(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.expr, got, tc.want)
		}
	}
	for _, bad := range []string{`a{b="c"`, `a{b}`, `sum by a`, `rate(a[5m)`, `a{b="c}`} {
		if _, err := parsePromQL(bad); err == nil {
			t.Errorf("%s: parsed without an error", bad)
		}
	}
}
