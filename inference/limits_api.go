package inference

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// limitsPath is the admin API of the gateway's rate limits and budgets.
const limitsPath = "/inference/limits"

// maxLimitsBody bounds a PUT /inference/limits body.
const maxLimitsBody = 4 << 20

// limitsResponse is what GET, PUT and DELETE /inference/limits answer:
// the limits in force on this replica, where they come from, and each
// budget's spend as last measured.
type limitsResponse struct {
	Source    string         `json:"source"` // "config" or "store"
	UpdatedAt *time.Time     `json:"updated_at,omitempty"`
	UpdatedBy string         `json:"updated_by,omitempty"`
	Limits    []LimitRule    `json:"limits"`
	Budgets   []BudgetRule   `json:"budgets"`
	Spend     []BudgetStatus `json:"budget_status"`
}

// registerLimitsAPI adds GET, PUT and DELETE /inference/limits, for
// instance-wide admin keys only: limits span every tenant.
func (g *Gateway) registerLimitsAPI(mux *http.ServeMux, weaveAuth func(http.Handler) http.Handler) {
	mux.Handle("GET "+limitsPath, weaveAuth(http.HandlerFunc(g.getLimits)))
	mux.Handle("PUT "+limitsPath, weaveAuth(http.HandlerFunc(g.putLimits)))
	mux.Handle("DELETE "+limitsPath, weaveAuth(http.HandlerFunc(g.resetLimits)))
}

// limitsAdmin checks that the caller may read and change the limits.
func limitsAdmin(r *http.Request) (auth.Principal, error) {
	p, ok := httpapi.PrincipalFrom(r.Context())
	if !ok {
		return p, auth.ErrUnauthenticated
	}
	if p.Entity != auth.AllEntities || p.Role != auth.RoleAdmin {
		return p, fmt.Errorf("%w: the inference limits apply to every team and need an instance-wide admin key", auth.ErrForbidden)
	}
	return p, nil
}

func (g *Gateway) getLimits(w http.ResponseWriter, r *http.Request) {
	if _, err := limitsAdmin(r); err != nil {
		httpapi.WriteError(w, r, g.logger, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, g.limitsInForce())
}

// putLimits replaces the limits and budgets of every replica: they are
// stored, in force here at once, and on the others by their next sync.
func (g *Gateway) putLimits(w http.ResponseWriter, r *http.Request) {
	p, err := limitsAdmin(r)
	if err == nil {
		var body []byte
		if body, err = httpapi.ReadJSON(r, maxLimitsBody); err == nil {
			err = g.storeLimits(r, p, body)
		}
	}
	if err != nil {
		httpapi.WriteError(w, r, g.logger, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, g.limitsInForce())
}

func (g *Gateway) storeLimits(r *http.Request, p auth.Principal, body []byte) error {
	set, err := decodeLimitSet(body)
	if err != nil {
		return err
	}
	doc, err := json.Marshal(set)
	if err != nil {
		return fmt.Errorf("encode limits: %w", err)
	}
	at := g.now().UTC().Truncate(time.Microsecond)
	if g.limitStore != nil {
		if err := g.limitStore.PutInferenceLimits(r.Context(), storage.InferenceLimits{Doc: doc, UpdatedAt: at, UpdatedBy: p.UserID}); err != nil {
			return err
		}
	}
	g.applyLimits(set, "store", at, p.UserID)
	return nil
}

// resetLimits drops the stored limits, so the configuration file's apply.
func (g *Gateway) resetLimits(w http.ResponseWriter, r *http.Request) {
	_, err := limitsAdmin(r)
	if err == nil && g.limitStore != nil {
		err = g.limitStore.DeleteInferenceLimits(r.Context())
	}
	if err != nil {
		httpapi.WriteError(w, r, g.logger, err)
		return
	}
	g.applyLimits(LimitSet{Limits: g.cfg.Limits, Budgets: g.cfg.Budgets}, "config", time.Time{}, "")
	httpapi.WriteJSON(w, http.StatusOK, g.limitsInForce())
}

func (g *Gateway) limitsInForce() limitsResponse {
	cur := g.rates.limits.Load()
	out := limitsResponse{Source: cur.source, UpdatedBy: cur.updatedBy, Limits: cur.set.Limits, Budgets: cur.set.Budgets,
		Spend: *g.spendCaps.status.Load()}
	if !cur.updatedAt.IsZero() {
		out.UpdatedAt = &cur.updatedAt
	}
	if out.Limits == nil {
		out.Limits = []LimitRule{}
	}
	if out.Budgets == nil {
		out.Budgets = []BudgetRule{}
	}
	return out
}

// decodeLimitSet reads a PUT body: {"limits": [...], "budgets": [...]},
// each rule strictly, so a misspelt field is refused rather than
// ignored. Errors name the field and the fix.
func decodeLimitSet(body []byte) (LimitSet, error) {
	var set LimitSet
	var limits, budgets []json.RawMessage
	if err := wire.DecodeTop(body, wire.Fields{"limits": &limits, "budgets": &budgets}); err != nil {
		return set, err
	}
	if len(limits) > maxLimitRules || len(budgets) > maxBudgetRules {
		return set, &wire.FieldError{Field: "limits", Msg: fmt.Sprintf("at most %d limits and %d budgets", maxLimitRules, maxBudgetRules)}
	}
	set.Limits, set.Budgets = make([]LimitRule, len(limits)), make([]BudgetRule, len(budgets))
	for i, raw := range limits {
		if err := decodeStrict(raw, &set.Limits[i]); err != nil {
			return set, &wire.FieldError{Field: fmt.Sprintf("limits[%d]", i),
				Msg: err.Error() + "; a limit has project or key, requests_per_minute and tokens_per_minute"}
		}
	}
	for i, raw := range budgets {
		if err := decodeStrict(raw, &set.Budgets[i]); err != nil {
			return set, &wire.FieldError{Field: fmt.Sprintf("budgets[%d]", i),
				Msg: err.Error() + "; a budget has name, project, key, usd_per_day and usd_per_month"}
		}
	}
	if errs := set.validate(""); len(errs) > 0 {
		return set, httpapi.Errorf(http.StatusBadRequest, errors.Join(errs...).Error())
	}
	return set, nil
}

// decodeStrict decodes one JSON value, refusing unknown fields.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}
