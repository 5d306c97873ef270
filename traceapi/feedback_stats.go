package traceapi

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// The reference's bounds on feedback statistics requests.
const (
	maxFeedbackStatsRange       = 31 * 24 * time.Hour
	maxFeedbackAggregateBuckets = 256
	defaultFeedbackSampleLimit  = 2000
	// emptyStatsGranularity is the granularity answered when no metric
	// is asked for.
	emptyStatsGranularity = 3600
)

// feedbackJSONPath is what a metric's json_path may hold: the reference
// splices paths into SQL, and refuses anything else; keys may hold
// spaces (classifier monitors key their output by readable names).
var feedbackJSONPath = regexp.MustCompile(`^[a-zA-Z0-9_. ]+$`)

// feedbackAggregations are AggregationType's values.
var feedbackAggregations = []string{storage.StatSum, storage.StatAvg, storage.StatMin, storage.StatMax,
	storage.StatCount, storage.StatCountTrue, storage.StatCountFalse}

// defaultAggregations are a metric's aggregations when it names none.
var defaultAggregations = map[string][]string{
	storage.FeedbackNumeric:     {storage.StatAvg, storage.StatMin, storage.StatMax},
	storage.FeedbackBoolean:     {storage.StatCountTrue, storage.StatCountFalse},
	storage.FeedbackCategorical: {storage.StatCount},
}

// analyzer is the store's feedback statistics, or a 501 when it keeps none.
func (a *FeedbackAPI) analyzer() (storage.FeedbackAnalyzer, error) {
	an, ok := a.store.(storage.FeedbackAnalyzer)
	if !ok {
		return nil, httpapi.Errorf(http.StatusNotImplemented, "feedback statistics are not available on this store")
	}
	return an, nil
}

// valueError is a request the reference's model validators refuse (422).
func valueError(field, msg string) error {
	return &wire.FieldError{Field: field, Msg: msg, Schema: "value_error"}
}

// feedbackFilterReq is _FeedbackFilterBase: the project, the time range
// and the optional feedback_type and trigger_ref filters.
type feedbackFilterReq struct {
	projectID    string
	start, end   *wire.Time
	feedbackType *string
	triggerRef   *string
}

func (f *feedbackFilterReq) fields() wire.Fields {
	return wire.Fields{"project_id": &f.projectID, "start": &f.start, "end": &f.end,
		"feedback_type": &f.feedbackType, "trigger_ref": &f.triggerRef}
}

// resolve checks the range (end defaults to now) and authorises the read.
func (f *feedbackFilterReq) resolve(r *http.Request, now time.Time) (storage.FeedbackFilter, error) {
	out := storage.FeedbackFilter{ProjectID: f.projectID, Start: f.start.UTC(), End: now.UTC(), FeedbackType: f.feedbackType}
	if f.end != nil {
		out.End = f.end.UTC()
	}
	if out.End.Before(out.Start) {
		return out, valueError("end", "Feedback request end must be after start")
	}
	if out.End.Sub(out.Start) > maxFeedbackStatsRange {
		return out, valueError("end", "Feedback request date range cannot exceed 31 days")
	}
	if f.triggerRef != nil {
		ref := *f.triggerRef
		// A trailing ':*' matches every version of a monitor.
		if trimmed, ok := strings.CutSuffix(ref, ":*"); ok {
			ref, out.TriggerPrefix = trimmed, true
		}
		out.TriggerRef = &ref
	}
	if _, err := httpapi.Authorize(r.Context(), f.projectID, auth.Read); err != nil {
		return out, err
	}
	return out, nil
}

// metricSpec is FeedbackMetricSpec.
type metricSpec struct {
	JSONPath     string
	ValueType    string
	Aggregations []string
	Percentiles  []float64
}

// decodeMetric decodes and checks metrics[i], with the reference's
// default aggregations.
func decodeMetric(i int, raw json.RawMessage) (metricSpec, error) {
	field := fmt.Sprintf("metrics[%d]", i)
	m := metricSpec{ValueType: storage.FeedbackNumeric}
	err := wire.DecodeTop(raw, wire.Fields{"json_path": &m.JSONPath, "value_type": &m.ValueType,
		"aggregations": &m.Aggregations, "percentiles": &m.Percentiles}, "json_path")
	if err != nil {
		return m, prefixFieldErr(field, err)
	}
	defaults, ok := defaultAggregations[m.ValueType]
	if !ok {
		return m, &wire.FieldError{Field: field + ".value_type", Schema: wire.SchemaLiteral,
			Msg: fmt.Sprintf("Input should be 'numeric', 'boolean' or 'categorical', got %q", m.ValueType)}
	}
	for j, agg := range m.Aggregations {
		if !slices.Contains(feedbackAggregations, agg) {
			return m, &wire.FieldError{Field: fmt.Sprintf("%s.aggregations[%d]", field, j), Schema: "enum",
				Msg: fmt.Sprintf("Input should be one of %s, got %q", strings.Join(feedbackAggregations, ", "), agg)}
		}
		if m.ValueType == storage.FeedbackCategorical && agg != storage.StatCount {
			return m, &wire.FieldError{Field: fmt.Sprintf("%s.aggregations[%d]", field, j),
				Msg: fmt.Sprintf("%s does not apply to categorical values; use count", agg)}
		}
	}
	if len(m.Aggregations) == 0 {
		m.Aggregations = defaults
	}
	if strings.TrimSpace(m.JSONPath) == "" {
		return m, &wire.FieldError{Field: field + ".json_path", Msg: "json_path cannot be empty"}
	}
	if !feedbackJSONPath.MatchString(m.JSONPath) {
		return m, &wire.FieldError{Field: field + ".json_path",
			Msg: fmt.Sprintf("json_path may only contain [a-zA-Z0-9_. ], got: %q", m.JSONPath)}
	}
	for j, p := range m.Percentiles {
		if p < 0 || p > 100 || math.IsNaN(p) {
			return m, &wire.FieldError{Field: fmt.Sprintf("%s.percentiles[%d]", field, j),
				Msg: fmt.Sprintf("Percentile must be between 0 and 100, got %v", p)}
		}
	}
	if m.ValueType == storage.FeedbackCategorical {
		m.Percentiles = nil // they apply to numbers only
	}
	return m, nil
}

// slug is the metric's name in answers: its path with dots and spaces
// as underscores.
func (m metricSpec) slug() string {
	return strings.NewReplacer(".", "_", " ", "_").Replace(m.JSONPath)
}

// statColumn is one requested statistic and how it is answered.
type statColumn struct {
	alias string // '{agg}_{slug}' or 'p{percentile}_{slug}'
	slug  string
	key   string // its key in window_stats
	// zero says empty buckets answer 0 rather than null (sums, counts
	// and averages, as the reference's buckets do).
	zero, integral bool
}

func percentileName(p float64) string { return "p" + percentileText(p) }

func (a *FeedbackAPI) stats(r *http.Request, body []byte) (any, error) {
	var (
		filter      feedbackFilterReq
		granularity *int64
		timezone    = "UTC"
		rawMetrics  []json.RawMessage
	)
	fields := filter.fields()
	fields["granularity"], fields["timezone"], fields["metrics"] = &granularity, &timezone, &rawMetrics
	if err := wire.DecodeTop(body, fields, "project_id", "start"); err != nil {
		return nil, err
	}
	metrics := make([]metricSpec, len(rawMetrics))
	for i, raw := range rawMetrics {
		m, err := decodeMetric(i, raw)
		if err != nil {
			return nil, err
		}
		metrics[i] = m
	}
	loc, err := time.LoadLocation(timezone)
	if err != nil || timezone == "" || strings.EqualFold(timezone, "local") {
		return nil, &wire.FieldError{Field: "timezone", Msg: fmt.Sprintf("%q is not an IANA time zone such as America/New_York", timezone)}
	}
	if granularity != nil && *granularity <= 0 {
		return nil, &wire.FieldError{Field: "granularity", Msg: "must be a positive number of seconds"}
	}
	f, err := filter.resolve(r, time.Now())
	if err != nil {
		return nil, err
	}
	an, err := a.analyzer()
	if err != nil {
		return nil, err
	}
	res := map[string]any{"start": wire.Time{Time: f.Start}, "end": wire.Time{Time: f.End}, "timezone": timezone,
		"granularity": emptyStatsGranularity, "buckets": []any{}, "window_stats": nil}
	if len(metrics) == 0 {
		return res, nil
	}
	q, cols := statsQuery(f, metrics, granularity, loc)
	out, err := an.FeedbackStats(r.Context(), q)
	if err != nil {
		return nil, err
	}
	res["granularity"] = q.BucketSeconds
	res["buckets"] = statsBuckets(q, cols, out, loc)
	res["window_stats"] = windowStats(cols, out.Window)
	return res, nil
}

// statsQuery plans the storage query of the metrics over f and names
// its statistics.
func statsQuery(f storage.FeedbackFilter, metrics []metricSpec, granularity *int64, loc *time.Location) (storage.FeedbackStatsQuery, []statColumn) {
	span := f.End.Sub(f.Start)
	width := autoGranularity(span)
	if granularity != nil {
		width = *granularity
	}
	width = capGranularity(width, span)
	q := storage.FeedbackStatsQuery{FeedbackFilter: f, BucketSeconds: width, Origin: bucketOrigin(f.Start, width, loc)}
	var cols []statColumn
	for i, m := range metrics {
		path := strings.Split(m.JSONPath, ".")
		q.Metrics = append(q.Metrics, storage.FeedbackMetric{Path: path, Type: m.ValueType})
		slug := m.slug()
		for _, agg := range m.Aggregations {
			q.Stats = append(q.Stats, storage.FeedbackStat{Metric: i, Func: agg})
			counts := strings.HasPrefix(agg, storage.StatCount)
			cols = append(cols, statColumn{alias: agg + "_" + slug, slug: slug, key: agg,
				zero: counts || agg == storage.StatSum || agg == storage.StatAvg, integral: counts})
		}
		for _, p := range m.Percentiles {
			q.Stats = append(q.Stats, storage.FeedbackStat{Metric: i, Func: storage.StatQuantile, Level: percentileLevel(p)})
			cols = append(cols, statColumn{alias: percentileName(p) + "_" + slug, slug: slug, key: percentileName(p)})
		}
	}
	return q, cols
}

// statsBuckets answers every bucket of the range, empty ones included,
// each as {"timestamp", one key per statistic, "count"} in that order.
func statsBuckets(q storage.FeedbackStatsQuery, cols []statColumn, out storage.FeedbackStatsResult, loc *time.Location) []any {
	have := map[int64]storage.FeedbackStatsBucket{}
	for _, b := range out.Buckets {
		have[b.Index] = b
	}
	n := int64(0)
	for q.Origin.Add(time.Duration(n*q.BucketSeconds) * time.Second).Before(q.End) {
		n++
	}
	buckets := make([]any, 0, n)
	for i := range n {
		b := have[i]
		start := q.Origin.Add(time.Duration(i*q.BucketSeconds) * time.Second)
		row := &jsonObject{vals: map[string]any{}}
		row.set("timestamp", start.In(loc).Format("2006-01-02T15:04:05-07:00"))
		for j, c := range cols {
			var v *float64
			if j < len(b.Values) {
				v = b.Values[j]
			}
			row.set(c.alias, statValue(c, v))
		}
		row.set("count", b.Count)
		buckets = append(buckets, row)
	}
	return buckets
}

// statValue is one bucket's value of c: nil stays null unless c answers 0.
func statValue(c statColumn, v *float64) any {
	switch {
	case v == nil && c.zero:
		return 0
	case v == nil:
		return nil
	case c.integral:
		return int64(*v)
	}
	return *v
}

// windowStats groups the window's values by metric slug and statistic.
// A count of nothing is null, as the reference's countOrNull answers.
func windowStats(cols []statColumn, vals []*float64) map[string]map[string]*float64 {
	out := map[string]map[string]*float64{}
	for i, c := range cols {
		if out[c.slug] == nil {
			out[c.slug] = map[string]*float64{}
		}
		var v *float64
		if i < len(vals) {
			v = vals[i]
		}
		if c.key == storage.StatCount && v != nil && *v == 0 {
			v = nil
		}
		out[c.slug][c.key] = v
	}
	return out
}

func (a *FeedbackAPI) aggregate(r *http.Request, body []byte) (any, error) {
	var (
		projectID            string
		afterMS, beforeMS    int64
		bucketSeconds        *int64
		ratingMin, ratingMax *float64
		q                    storage.FeedbackAggregateQuery
	)
	err := wire.DecodeTop(body, wire.Fields{"project_id": &projectID, "after_ms": &afterMS, "before_ms": &beforeMS,
		"time_bucket_seconds": &bucketSeconds, "feedback_types": &q.FeedbackTypes, "tags": &q.Tags,
		"rating_min": &ratingMin, "rating_max": &ratingMax, "monitor_ids": &q.MonitorIDs, "scorer_ids": &q.ScorerIDs,
		"span_agent_names": &q.SpanAgentNames, "span_types": &q.SpanTypes, "group_by": &q.GroupBy},
		"project_id", "after_ms", "before_ms")
	if err != nil {
		return nil, err
	}
	if err := checkAggregateReq(afterMS, beforeMS, bucketSeconds, ratingMin, ratingMax, q); err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), projectID, auth.Read); err != nil {
		return nil, err
	}
	an, err := a.analyzer()
	if err != nil {
		return nil, err
	}
	q.ProjectID, q.After, q.Before = projectID, time.UnixMilli(afterMS).UTC(), time.UnixMilli(beforeMS).UTC()
	q.RatingMin, q.RatingMax = ratingMin, ratingMax
	if bucketSeconds != nil {
		q.BucketSeconds = *bucketSeconds
	}
	groups, err := an.AggregateFeedback(r.Context(), q)
	if err != nil {
		return nil, err
	}
	buckets := make([]feedbackAggregateBucket, len(groups))
	for i, g := range groups {
		b := feedbackAggregateBucket{Group: map[string]string{}, TotalCount: g.TotalCount, ScoredCount: g.ScoredCount,
			TagCounts: g.TagCounts, RatingCounts: g.RatingCounts, RatingSums: g.RatingSums}
		if g.BucketStart != nil {
			ms := g.BucketStart.UnixMilli()
			b.TimeBucketStartMS = &ms
		}
		for j, dim := range q.GroupBy {
			b.Group[dim] = g.Group[j]
		}
		buckets[i] = b
	}
	return feedbackAggregateRes{TimeBucketSeconds: bucketSeconds, AfterMS: afterMS, BeforeMS: beforeMS, Buckets: buckets}, nil
}

// feedbackAggregateBucket is FeedbackAggregateBucket.
type feedbackAggregateBucket struct {
	TimeBucketStartMS *int64             `json:"time_bucket_start_ms"`
	Group             map[string]string  `json:"group"`
	TotalCount        int64              `json:"total_count"`
	ScoredCount       int64              `json:"scored_count"`
	TagCounts         map[string]int64   `json:"tag_counts"`
	RatingCounts      map[string]int64   `json:"rating_counts"`
	RatingSums        map[string]float64 `json:"rating_sums"`
}

// feedbackAggregateRes is FeedbackAggregateRes.
type feedbackAggregateRes struct {
	TimeBucketSeconds *int64                    `json:"time_bucket_seconds"`
	AfterMS           int64                     `json:"after_ms"`
	BeforeMS          int64                     `json:"before_ms"`
	Buckets           []feedbackAggregateBucket `json:"buckets"`
}

// checkAggregateReq applies FeedbackAggregateReq's field bounds and
// validator.
func checkAggregateReq(afterMS, beforeMS int64, bucketSeconds *int64, ratingMin, ratingMax *float64, q storage.FeedbackAggregateQuery) error {
	for name, v := range map[string]int64{"after_ms": afterMS, "before_ms": beforeMS} {
		if v < 0 {
			return &wire.FieldError{Field: name, Schema: "greater_than_equal", Msg: "Input should be greater than or equal to 0"}
		}
	}
	if bucketSeconds != nil && *bucketSeconds <= 0 {
		return &wire.FieldError{Field: "time_bucket_seconds", Schema: "greater_than", Msg: "Input should be greater than 0"}
	}
	for name, v := range map[string]*float64{"rating_min": ratingMin, "rating_max": ratingMax} {
		if v != nil && (*v < 0 || *v > 1 || math.IsNaN(*v)) {
			return &wire.FieldError{Field: name, Schema: "value_error", Msg: "Input should be between 0 and 1"}
		}
	}
	for i, t := range q.SpanTypes {
		if t != "agent_turn" && t != "agent_conversation" {
			return &wire.FieldError{Field: fmt.Sprintf("span_types[%d]", i), Schema: wire.SchemaLiteral,
				Msg: fmt.Sprintf("Input should be 'agent_turn' or 'agent_conversation', got %q", t)}
		}
	}
	for i, g := range q.GroupBy {
		if !slices.Contains(storage.FeedbackAggregateDimensions, g) {
			return &wire.FieldError{Field: fmt.Sprintf("group_by[%d]", i), Schema: wire.SchemaLiteral,
				Msg: fmt.Sprintf("Input should be one of %s, got %q", strings.Join(storage.FeedbackAggregateDimensions, ", "), g)}
		}
	}
	span := beforeMS - afterMS
	if span <= 0 {
		return valueError("before_ms", "before_ms must be greater than after_ms")
	}
	if span > maxFeedbackStatsRange.Milliseconds() {
		filtered := len(q.FeedbackTypes)+len(q.Tags)+len(q.MonitorIDs)+len(q.ScorerIDs)+len(q.SpanAgentNames)+len(q.SpanTypes) > 0 ||
			ratingMin != nil || ratingMax != nil
		if bucketSeconds != nil || len(q.GroupBy) > 0 || filtered {
			return valueError("before_ms", "Feedback requests over 31 days must be a project-wide total: "+
				"no time_bucket_seconds, no group_by, and no filters.")
		}
	}
	if bucketSeconds != nil && float64(span)/1000/float64(*bucketSeconds) > maxFeedbackAggregateBuckets {
		return valueError("time_bucket_seconds", fmt.Sprintf("Feedback request range cannot exceed %d buckets", maxFeedbackAggregateBuckets))
	}
	return nil
}

func (a *FeedbackAPI) payloadSchema(r *http.Request, body []byte) (any, error) {
	var filter feedbackFilterReq
	limit := int64(defaultFeedbackSampleLimit)
	fields := filter.fields()
	fields["sample_limit"] = &limit
	if err := wire.DecodeTop(body, fields, "project_id", "start"); err != nil {
		return nil, err
	}
	if limit < 1 || limit > storage.MaxFeedbackSamples {
		return nil, &wire.FieldError{Field: "sample_limit", Schema: "value_error",
			Msg: fmt.Sprintf("Input should be between 1 and %d", storage.MaxFeedbackSamples)}
	}
	f, err := filter.resolve(r, time.Now())
	if err != nil {
		return nil, err
	}
	an, err := a.analyzer()
	if err != nil {
		return nil, err
	}
	payloads, err := an.SampleFeedbackPayloads(r.Context(), f, int(limit))
	if err != nil {
		return nil, err
	}
	return map[string]any{"paths": discoverPayloadPaths(payloads)}, nil
}
