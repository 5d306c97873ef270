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

// The x-ratelimit headers, in canonical form.
const (
	headerLimitRequests     = "X-Ratelimit-Limit-Requests"
	headerRemainingRequests = "X-Ratelimit-Remaining-Requests"
	headerResetRequests     = "X-Ratelimit-Reset-Requests"
	headerLimitTokens       = "X-Ratelimit-Limit-Tokens"
	headerRemainingTokens   = "X-Ratelimit-Remaining-Tokens"
	headerResetTokens       = "X-Ratelimit-Reset-Tokens"
)

// writeHeaders sets the x-ratelimit headers the openai clients read, of
// the tightest limit of each dimension; a request without limits gets
// none. Every request with limits writes them, so the values share one
// string and one slice.
func (a *admission) writeHeaders(h http.Header) {
	if !a.hasReq && !a.hasTok {
		return
	}
	var buf [128]byte
	b := buf[:0]
	var ends [6]int
	if a.hasReq {
		b = strconv.AppendInt(b, a.requests.limitRequests, 10)
		ends[0] = len(b)
		b = strconv.AppendInt(b, a.requests.remainingRequests, 10)
		ends[1] = len(b)
		b = appendReset(b, a.requests.reset)
		ends[2] = len(b)
	}
	if a.hasTok {
		b = strconv.AppendInt(b, a.toks.limitTokens, 10)
		ends[3] = len(b)
		b = strconv.AppendInt(b, a.toks.remainingTokens, 10)
		ends[4] = len(b)
		b = appendReset(b, a.toks.reset)
		ends[5] = len(b)
	}
	all := string(b)
	vals := make([]string, 6)
	from := 0
	for i, name := range [6]string{headerLimitRequests, headerRemainingRequests, headerResetRequests,
		headerLimitTokens, headerRemainingTokens, headerResetTokens} {
		if (i < 3 && !a.hasReq) || (i >= 3 && !a.hasTok) {
			continue
		}
		vals[i] = all[from:ends[i]]
		from = ends[i]
		h[name] = vals[i : i+1 : i+1]
	}
}

// resetString is a wait as OpenAI writes it: "1s", "6m0s", "20ms".
func resetString(d time.Duration) string { return string(appendReset(nil, d)) }

// appendReset appends resetString(d): whole seconds from a second up
// (as time.Duration writes them), else milliseconds.
func appendReset(b []byte, d time.Duration) []byte {
	if d < time.Second {
		return append(strconv.AppendInt(b, int64(max(d.Round(time.Millisecond), 0)/time.Millisecond), 10), "ms"...)
	}
	s := int64(d.Round(time.Second) / time.Second)
	if h := s / 3600; h > 0 {
		b = append(strconv.AppendInt(b, h, 10), 'h')
		s %= 3600
		b = append(strconv.AppendInt(b, s/60, 10), 'm')
		s %= 60
	} else if m := s / 60; m > 0 {
		b = append(strconv.AppendInt(b, m, 10), 'm')
		s %= 60
	}
	return append(strconv.AppendInt(b, s, 10), 's')
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
// was one: total_tokens, or prompt_tokens plus completion_tokens. The
// object is the upstream's, already checked to be one; its members are
// found by name, without decoding it, as every request reads it.
func usedTokens(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	total, okTotal := usageMember(raw, `"total_tokens"`)
	prompt, okPrompt := usageMember(raw, `"prompt_tokens"`)
	completion, okCompletion := usageMember(raw, `"completion_tokens"`)
	if !okTotal && !okPrompt && !okCompletion {
		return 0, false
	}
	return max(total, prompt+completion), true
}

// usageMember reads the integer after the member name in raw.
func usageMember(raw []byte, name string) (int64, bool) {
	i := bytes.Index(raw, []byte(name))
	if i < 0 {
		return 0, false
	}
	rest := bytes.TrimLeft(raw[i+len(name):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return 0, false
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	n, digits := int64(0), 0
	for _, c := range rest {
		if c < '0' || c > '9' || digits == 12 {
			break
		}
		n, digits = n*10+int64(c-'0'), digits+1
	}
	return n, digits > 0
}
