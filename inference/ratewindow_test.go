package inference

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testClock is a clock tests move forward; it starts at the real time.
type testClock struct{ offset atomic.Int64 }

func (c *testClock) now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// advance moves the clock by d.
func (c *testClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// toNextWindow moves the clock to the start of the next rate window.
func (c *testClock) toNextWindow() {
	now := c.now()
	c.advance(windowEnd(windowOf(now)).Sub(now) + time.Millisecond)
}

// minuteAt is a time s seconds into a window.
func minuteAt(s int) time.Time { return time.Unix(1_800_000_000-1_800_000_000%60+int64(s), 0) }

func TestWindowCounterAdmits(t *testing.T) {
	type step struct {
		at     int // seconds into the first window
		tokens int64
		ok     bool
		// refusedTokens and tooLarge say why a refusal was made.
		refusedTokens, tooLarge bool
		remainingReq, remTok    int64
	}
	for _, tc := range []struct {
		name  string
		rule  LimitRule
		steps []step
	}{
		{"requests per minute, then the next window", LimitRule{RequestsPerMinute: 2}, []step{
			{at: 1, ok: true, remainingReq: 1},
			{at: 2, ok: true, remainingReq: 0},
			{at: 59, ok: false, remainingReq: 0},
			{at: 60, ok: true, remainingReq: 1},
		}},
		{"tokens per minute counts the estimate", LimitRule{TokensPerMinute: 100}, []step{
			{at: 0, tokens: 60, ok: true, remTok: 40},
			{at: 10, tokens: 41, ok: false, refusedTokens: true, remTok: 40},
			{at: 11, tokens: 40, ok: true, remTok: 0},
			{at: 61, tokens: 100, ok: true, remTok: 0},
		}},
		{"a request larger than the limit can never pass", LimitRule{RequestsPerMinute: 5, TokensPerMinute: 100}, []step{
			{at: 0, tokens: 101, ok: false, refusedTokens: true, tooLarge: true, remainingReq: 5, remTok: 100},
			{at: 1, tokens: 100, ok: true, remainingReq: 4, remTok: 0},
		}},
		{"both dimensions: requests refuse first", LimitRule{RequestsPerMinute: 1, TokensPerMinute: 1000}, []step{
			{at: 0, tokens: 10, ok: true, remainingReq: 0, remTok: 990},
			{at: 1, tokens: 10, ok: false, remainingReq: 0, remTok: 990},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &windowCounter{scope: "project:acme/app"}
			for i, s := range tc.steps {
				v, live := c.admit(tc.rule, minuteAt(s.at), s.tokens)
				if !live || v.ok != s.ok || v.refusedTokens != s.refusedTokens || v.requestTooLarge != s.tooLarge {
					t.Fatalf("step %d: %+v live %v, want ok %v tokens-refused %v too-large %v", i, v, live, s.ok, s.refusedTokens, s.tooLarge)
				}
				if tc.rule.RequestsPerMinute > 0 && v.remainingRequests != s.remainingReq {
					t.Fatalf("step %d: %d requests remaining, want %d", i, v.remainingRequests, s.remainingReq)
				}
				if tc.rule.TokensPerMinute > 0 && v.remainingTokens != s.remTok {
					t.Fatalf("step %d: %d tokens remaining, want %d", i, v.remainingTokens, s.remTok)
				}
				if want := time.Duration(60-s.at%60) * time.Second; v.reset != want {
					t.Fatalf("step %d: reset in %s, want %s", i, v.reset, want)
				}
			}
		})
	}
}

// TestWindowCounterOtherReplicas: the others' counts of the same window
// count against the limit; those of an older window do not.
func TestWindowCounterOtherReplicas(t *testing.T) {
	rule := LimitRule{RequestsPerMinute: 10, TokensPerMinute: 1000}
	for _, tc := range []struct {
		name             string
		othersWindow     int64 // relative to the request's
		others           usage
		wantOK           bool
		wantRemainingReq int64
	}{
		{"same window, room left", 0, usage{requests: 5, tokens: 100}, true, 4},
		{"same window, full", 0, usage{requests: 10, tokens: 100}, false, 0},
		{"same window, tokens full", 0, usage{requests: 1, tokens: 995}, false, 9},
		{"the last window's counts do not count", -1, usage{requests: 10, tokens: 1000}, true, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := minuteAt(30)
			c := &windowCounter{}
			c.setOthers(windowOf(at)+tc.othersWindow, tc.others)
			v, _ := c.admit(rule, at, 10)
			if v.ok != tc.wantOK || v.remainingRequests != tc.wantRemainingReq {
				t.Fatalf("admitted %v with %d remaining, want %v with %d", v.ok, v.remainingRequests, tc.wantOK, tc.wantRemainingReq)
			}
		})
	}
}

// TestAdmissionSettles: the estimate counted at admission is corrected
// with the recorded usage, a request refused by the project's limit
// counts against neither, and a request without usage keeps its
// estimate.
func TestAdmissionSettles(t *testing.T) {
	r := newRateLimiter(LimitSet{Limits: []LimitRule{
		{Key: "k1", TokensPerMinute: 1000},
		{Project: "acme/app", RequestsPerMinute: 2, TokensPerMinute: 1000},
	}})
	at := minuteAt(5)
	a, e := r.admit(at, "acme/app", "k1", 300)
	if e != nil {
		t.Fatal(e)
	}
	a.settle(usedTokens(json.RawMessage(`{"prompt_tokens":20,"completion_tokens":30,"total_tokens":50}`)))
	b, e := r.admit(at, "acme/app", "k1", 100)
	if e != nil || b.toks.remainingTokens != 1000-50-100 || b.requests.remainingRequests != 0 {
		t.Fatalf("after settling 300 to 50: %+v %v, want 850 tokens and 0 requests left", b, e)
	}
	b.settle(usedTokens(nil)) // no usage: the estimate stands
	refused, e := r.admit(at, "acme/app", "k1", 10)
	if e == nil || e.status != http.StatusTooManyRequests || e.typ != "requests" || e.retryAfter != 55*time.Second {
		t.Fatalf("third request: %+v, want 429 requests with Retry-After 55s", e)
	}
	if refused.key != nil || refused.project != nil {
		t.Fatal("a refused request still holds its counters")
	}
	key := r.counter(true, "k1")
	if u := key.used(); u.requests != 2 || u.tokens != 150 {
		t.Fatalf("the key counts %+v after a refusal by the project, want 2 requests and 150 tokens", u)
	}
}

func TestEstimateTokens(t *testing.T) {
	for _, tc := range []struct {
		body string
		want int64
	}{
		{`{"messages":[{"role":"user","content":"hi"}]}`, 8},
		{`{"messages":[{"role":"user","content":"hi"}],"max_tokens":100}`, 108},
		{`{"messages":[{"role":"user","content":"hi"}],"max_tokens":100,"max_completion_tokens":10,"n":3}`, 38},
		{`{"messages":[{"role":"user","content":"hi"}],"max_tokens":-5}`, 8},
		{`{"messages":[{"role":"user","content":"hi"}],"max_tokens":"lots"}`, 8},
		{`{"messages":[{"role":"user","content":"hi"}],"max_tokens":99999999999999999999}`, 8},
	} {
		fields, e := decodeObject([]byte(tc.body))
		if e != nil {
			t.Fatal(e)
		}
		if got := estimateTokens(fields); got != tc.want {
			t.Errorf("%s: %d tokens, want %d", tc.body, got, tc.want)
		}
	}
}

func TestLimitSetValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  LimitSet
		want string // "" for valid
	}{
		{"valid", LimitSet{Limits: []LimitRule{{Project: "acme/app", RequestsPerMinute: 600, TokensPerMinute: 200000}, {Key: "*", RequestsPerMinute: 60}},
			Budgets: []BudgetRule{{Project: "acme/app", USDPerDay: 25}}}, ""},
		{"neither project nor key", LimitSet{Limits: []LimitRule{{RequestsPerMinute: 1}}}, "inference.limits[0]: name exactly one of project"},
		{"both", LimitSet{Limits: []LimitRule{{Project: "a/b", Key: "k", RequestsPerMinute: 1}}}, "inference.limits[0]: name exactly one"},
		{"no number", LimitSet{Limits: []LimitRule{{Project: "a/b"}}}, "inference.limits[0]: set requests_per_minute"},
		{"negative", LimitSet{Limits: []LimitRule{{Project: "a/b", RequestsPerMinute: -1}}}, "inference.limits[0]: set requests_per_minute"},
		{"bad project", LimitSet{Limits: []LimitRule{{Project: "acme", RequestsPerMinute: 1}}}, "inference.limits[0].project: \"acme\" is not entity/project"},
		{"duplicate", LimitSet{Limits: []LimitRule{{Project: "a/b", RequestsPerMinute: 1}, {Project: "a/b", TokensPerMinute: 1}}}, "inference.limits[1]: the same project or key as inference.limits[0]"},
		{"budget without project", LimitSet{Budgets: []BudgetRule{{Key: "k", USDPerDay: 1}}}, "inference.budgets[0].project: required"},
		{"budget without amount", LimitSet{Budgets: []BudgetRule{{Project: "a/b"}}}, "inference.budgets[0]: set usd_per_day"},
		{"negative budget", LimitSet{Budgets: []BudgetRule{{Project: "a/b", USDPerMonth: -3}}}, "inference.budgets[0].usd_per_month: -3 must be"},
		{"budget for every project", LimitSet{Budgets: []BudgetRule{{Project: "*", USDPerDay: 1}}}, "inference.budgets[0]: a budget names one project"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := tc.set.validate("inference.")
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Fatalf("refused: %v", errs)
			case tc.want != "" && (len(errs) == 0 || !containsError(errs, tc.want)):
				t.Fatalf("errors %v, want one starting %q", errs, tc.want)
			}
		})
	}
}

func containsError(errs []error, prefix string) bool {
	for _, e := range errs {
		if len(e.Error()) >= len(prefix) && e.Error()[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}

func TestResetAndUsageFormats(t *testing.T) {
	for d, want := range map[time.Duration]string{
		20 * time.Millisecond: "20ms", 999 * time.Millisecond: "999ms", time.Second: "1s", 1500 * time.Millisecond: "2s",
		59 * time.Second: "59s", 90 * time.Second: "1m30s", 6 * time.Minute: "6m0s", 2*time.Hour + time.Second: "2h0m1s",
	} {
		if got := resetString(d); got != want || (d >= time.Second && got != d.Round(time.Second).String()) {
			t.Errorf("resetString(%s) = %q, want %q", d, got, want)
		}
	}
	for raw, want := range map[string]int64{
		`{"prompt_tokens":20,"completion_tokens":12,"total_tokens":32}`:                                           32,
		`{"prompt_tokens": 20, "completion_tokens": 12}`:                                                          32,
		`{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":3}}`: 12,
		`{"input_tokens":5}`: -1,
	} {
		got, ok := usedTokens(json.RawMessage(raw))
		if want < 0 && ok || want >= 0 && (!ok || got != want) {
			t.Errorf("usedTokens(%s) = %d %v, want %d", raw, got, ok, want)
		}
	}
}

// TestConfigValidatesLimits: the configuration file's limits are checked
// with the rest, each error naming its full key.
func TestConfigValidatesLimits(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Limits = []LimitRule{{Project: "acme/app", RequestsPerMinute: 600, TokensPerMinute: 200000}}
	cfg.Budgets = []BudgetRule{{Project: "acme/app", USDPerDay: 25}}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the documented shape: %v", err)
	}
	cfg.Limits = append(cfg.Limits, LimitRule{Key: "k"})
	cfg.LimitsSyncInterval, cfg.BudgetsInterval = 0, time.Millisecond
	err := cfg.Validate()
	for _, want := range []string{"inference.limits[1]: set requests_per_minute", "inference.limits_sync_interval: 0s must be at least 10ms",
		"inference.budgets_interval: 1ms must be at least 10ms"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors %v, want %q", err, want)
		}
	}
}
