package inference

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Scope prefixes of the counts replicas publish.
const (
	projectScope = "project:"
	keyScope     = "key:"
)

// compiledLimits is a LimitSet indexed for the request path; it is never
// changed once built, and replaced whole when the set changes.
type compiledLimits struct {
	set       LimitSet
	source    string // "config" or "store"
	updatedAt time.Time
	updatedBy string
	projects  map[string]LimitRule
	keys      map[string]LimitRule
	// anyProject and anyKey are the "*" rules; zero when absent.
	anyProject, anyKey LimitRule
}

func compileLimits(set LimitSet, source string, updatedAt time.Time, updatedBy string) *compiledLimits {
	c := &compiledLimits{set: set, source: source, updatedAt: updatedAt, updatedBy: updatedBy,
		projects: map[string]LimitRule{}, keys: map[string]LimitRule{}}
	for _, l := range set.Limits {
		switch {
		case l.Project == anyScope:
			c.anyProject = l
		case l.Key == anyScope:
			c.anyKey = l
		case l.Project != "":
			c.projects[l.Project] = l
		default:
			c.keys[l.Key] = l
		}
	}
	return c
}

// rule is the limit of a project or key, and whether there is one.
func (c *compiledLimits) rule(isKey bool, name string) (LimitRule, bool) {
	own, def := c.projects, c.anyProject
	if isKey {
		own, def = c.keys, c.anyKey
	}
	if r, ok := own[name]; ok {
		return r, true
	}
	return def, def.RequestsPerMinute > 0 || def.TokensPerMinute > 0
}

// rateLimiter counts requests and tokens per minute per project and per
// API key against the limits in force. Only names with a limit get a
// counter, and counters idle for a window are dropped by the sync, so its
// memory follows the names in use.
type rateLimiter struct {
	limits atomic.Pointer[compiledLimits]

	mu       sync.RWMutex
	projects map[string]*windowCounter
	keys     map[string]*windowCounter
}

func newRateLimiter(set LimitSet) *rateLimiter {
	r := &rateLimiter{projects: map[string]*windowCounter{}, keys: map[string]*windowCounter{}}
	r.limits.Store(compileLimits(set, "config", time.Time{}, ""))
	return r
}

// counter is the counter of a project or key, made on first use.
func (r *rateLimiter) counter(isKey bool, name string) *windowCounter {
	m := r.projects
	if isKey {
		m = r.keys
	}
	r.mu.RLock()
	c := m[name]
	r.mu.RUnlock()
	if c != nil {
		return c
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c = m[name]; c == nil {
		scope := projectScope + name
		if isKey {
			scope = keyScope + name
		}
		c = &windowCounter{scope: scope}
		m[name] = c
	}
	return c
}

// admission is one request's standing with its limits: what the
// x-ratelimit headers report, and what to correct once its usage is
// known.
type admission struct {
	window         int64
	tokens         int64 // counted at admission
	key, project   *windowCounter
	requests, toks verdict // the tightest limit of each dimension
	hasReq, hasTok bool
}

// admit counts a request of an estimated tokens against its key's and
// its project's limits, or refuses it naming the limit it would exceed;
// a refused request counts against neither.
func (r *rateLimiter) admit(now time.Time, project, keyID string, tokens int64) (admission, *apiError) {
	lim := r.limits.Load()
	a := admission{window: windowOf(now), tokens: tokens}
	if rule, ok := lim.rule(true, keyID); ok {
		c, v := r.admitOne(true, keyID, rule, now, tokens)
		a.note(v)
		if !v.ok {
			return a, rateLimited(v, "API key "+keyID, "key")
		}
		a.key = c
	}
	if rule, ok := lim.rule(false, project); ok {
		c, v := r.admitOne(false, project, rule, now, tokens)
		a.note(v)
		if !v.ok {
			a.undo()
			return a, rateLimited(v, "project "+project, "project")
		}
		a.project = c
	}
	return a, nil
}

// admitOne counts a request against one counter, taking the successor
// of a counter the sync retired meanwhile.
func (r *rateLimiter) admitOne(isKey bool, name string, rule LimitRule, now time.Time, tokens int64) (*windowCounter, verdict) {
	for {
		c := r.counter(isKey, name)
		if v, live := c.admit(rule, now, tokens); live {
			return c, v
		}
	}
}

// note keeps v for the headers when it is the tighter of its dimension.
func (a *admission) note(v verdict) {
	if v.limitRequests > 0 && (!a.hasReq || v.remainingRequests < a.requests.remainingRequests) {
		a.requests, a.hasReq = v, true
	}
	if v.limitTokens > 0 && (!a.hasTok || v.remainingTokens < a.toks.remainingTokens) {
		a.toks, a.hasTok = v, true
	}
}

// undo takes back a request admitted but not served.
func (a *admission) undo() {
	for _, c := range []*windowCounter{a.key, a.project} {
		if c != nil {
			c.adjust(a.window, -a.tokens, true)
		}
	}
	a.key, a.project = nil, nil
}

// settle corrects the tokens counted at admission with the usage the
// upstream reported; without one the estimate stands.
func (a *admission) settle(used int64, known bool) {
	if !known || a.tokens == used {
		return
	}
	for _, c := range []*windowCounter{a.key, a.project} {
		if c != nil {
			c.adjust(a.window, used-a.tokens, false)
		}
	}
}

// writeHeaders sets the x-ratelimit headers the openai clients read, of
// the tightest limit of each dimension; a request without limits gets
// none.
func (a *admission) writeHeaders(h http.Header) {
	if a.hasReq {
		v := a.requests
		h["X-Ratelimit-Limit-Requests"] = []string{strconv.FormatInt(v.limitRequests, 10)}
		h["X-Ratelimit-Remaining-Requests"] = []string{strconv.FormatInt(v.remainingRequests, 10)}
		h["X-Ratelimit-Reset-Requests"] = []string{resetString(v.reset)}
	}
	if a.hasTok {
		v := a.toks
		h["X-Ratelimit-Limit-Tokens"] = []string{strconv.FormatInt(v.limitTokens, 10)}
		h["X-Ratelimit-Remaining-Tokens"] = []string{strconv.FormatInt(v.remainingTokens, 10)}
		h["X-Ratelimit-Reset-Tokens"] = []string{resetString(v.reset)}
	}
}

// resetString is a wait as OpenAI writes it: "1s", "6m0s", "20ms".
func resetString(d time.Duration) string {
	if d >= time.Second {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Millisecond).String()
}

// rateLimited is the refusal of a request over a limit, in OpenAI's words.
func rateLimited(v verdict, who, field string) *apiError {
	dim, unit, limit, used := "requests", "requests per min (RPM)", v.limitRequests, v.usedRequests
	asked := int64(1)
	if v.refusedTokens {
		dim, unit, limit, used, asked = "tokens", "tokens per min (TPM)", v.limitTokens, v.usedTokens, v.asked
	}
	if v.requestTooLarge {
		return &apiError{status: http.StatusTooManyRequests, typ: "tokens", code: "rate_limit_exceeded", message: fmt.Sprintf(
			"Request too large for %s on %s: Limit %d, Requested %d. The input or output tokens must be reduced "+
				"(the request's estimated prompt tokens plus max_tokens; inference.limits or PUT /inference/limits set the %s's limit)",
			who, unit, limit, asked, field)}
	}
	wait := max(v.reset, time.Second)
	return &apiError{status: http.StatusTooManyRequests, typ: dim, code: "rate_limit_exceeded", retryAfter: wait, message: fmt.Sprintf(
		"Rate limit reached for %s on %s: Limit %d, Used %d, Requested %d. Please try again in %s "+
			"(inference.limits or PUT /inference/limits set the %s's limit)", who, unit, limit, used, asked, resetString(v.reset), field)}
}

// estimateTokens is what a chat request is counted for at admission: its
// prompt at about four bytes of JSON a token, plus the most it may
// generate (max_completion_tokens, else max_tokens, times n).
func estimateTokens(fields map[string]json.RawMessage) int64 {
	prompt := int64(len(fields["messages"])+3) / 4
	out := rawCount(fields["max_completion_tokens"])
	if out == 0 {
		out = rawCount(fields["max_tokens"])
	}
	return prompt + out*max(rawCount(fields["n"]), 1)
}

// maxCountedTokens caps one field's count, so absurd values cannot
// overflow the sums.
const maxCountedTokens = 1 << 32

// rawCount reads a non-negative JSON integer; anything else is 0 (the
// upstream judges the field).
func rawCount(raw json.RawMessage) int64 {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || len(raw) > 12 {
		return 0
	}
	var n int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	return min(n, maxCountedTokens)
}

// usedTokens is the total of a recorded usage object, and whether there
// was one.
func usedTokens(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	var u struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
		TotalTokens      int64 `json:"total_tokens"`
	}
	if decodeJSON(raw, &u) != nil {
		return 0, false
	}
	return max(u.TotalTokens, u.PromptTokens+u.CompletionTokens), true
}
