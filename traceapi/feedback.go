package traceapi

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/emoji"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/wire"
)

// MaxFeedbackBatch is the most items one /feedback/batch/create takes.
const MaxFeedbackBatch = 1000

// purgeFeedbackMsg is the reference server's answer to a purge by anything
// but ids; clients match on it.
const purgeFeedbackMsg = "Can only purge feedback by specifying one or more feedback ids"

// FeedbackAPI serves the feedback endpoints.
type FeedbackAPI struct {
	store    storage.FeedbackStore
	rules    feedbackRules
	logger   *slog.Logger
	maxBytes int64
	limits   querylang.Limits
	budget   *readBudget
}

// NewFeedbackAPI builds the feedback endpoints over store.
func NewFeedbackAPI(store storage.FeedbackStore, maxBodyBytes int64, logger *slog.Logger, opts ...Option) (*FeedbackAPI, error) {
	table, err := emoji.New()
	if err != nil {
		return nil, fmt.Errorf("feedback API: %w", err)
	}
	o := applyOptions(opts)
	return &FeedbackAPI{store: store, rules: feedbackRules{emoji: table, now: time.Now}, logger: logger,
		maxBytes: maxBodyBytes, limits: o.limits, budget: newReadBudget(o, logger)}, nil
}

// Register adds the feedback routes to mux; wrap is applied to every handler.
func (a *FeedbackAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	for pattern, h := range map[string]httpapi.BodyHandler{
		"POST /feedback/create":       a.create,
		"POST /feedback/batch/create": a.batchCreate,
		"POST /feedback/query":        a.budget.json(a.query),
		"POST /feedback/purge":        a.purge,
		"POST /feedback/replace":      a.replace,

		"POST /feedback/stats":          a.budget.json(a.stats),
		"POST /feedback/aggregate":      a.budget.json(a.aggregate),
		"POST /feedback/payload_schema": a.budget.json(a.payloadSchema),
	} {
		mux.Handle(pattern, wrap(httpapi.JSON(a.logger, a.maxBytes, h)))
	}
}

// feedbackCreateRes is FeedbackCreateRes.
type feedbackCreateRes struct {
	ID        string          `json:"id"`
	CreatedAt wire.Time       `json:"created_at"`
	WBUserID  string          `json:"wb_user_id"`
	Payload   json.RawMessage `json:"payload"`
}

func createRes(f storage.Feedback) feedbackCreateRes {
	return feedbackCreateRes{ID: f.ID, CreatedAt: wire.Time{Time: f.CreatedAt}, WBUserID: f.WBUserID, Payload: f.Payload}
}

// prepare authorises and validates one create request.
func (a *FeedbackAPI) prepare(r *http.Request, f feedbackReq) (storage.Feedback, error) {
	p, err := httpapi.Authorize(r.Context(), f.ProjectID, auth.Write)
	if err != nil {
		return storage.Feedback{}, err
	}
	return a.rules.row(f, p.UserID)
}

func (a *FeedbackAPI) create(r *http.Request, body []byte) (any, error) {
	f, err := decodeFeedbackReq(body, nil)
	if err != nil {
		return nil, err
	}
	row, err := a.prepare(r, f)
	if err != nil {
		return nil, err
	}
	if err := a.store.CreateFeedback(r.Context(), []storage.Feedback{row}); err != nil {
		return nil, err
	}
	return createRes(row), nil
}

func (a *FeedbackAPI) batchCreate(r *http.Request, body []byte) (any, error) {
	var batch []json.RawMessage
	if err := wire.DecodeTop(body, wire.Fields{"batch": &batch}, "batch"); err != nil {
		return nil, err
	}
	if len(batch) > MaxFeedbackBatch {
		return nil, fmt.Errorf("batch has %d items, at most %d; split it: %w", len(batch), MaxFeedbackBatch, storage.ErrTooLarge)
	}
	rows := make([]storage.Feedback, len(batch))
	res := make([]feedbackCreateRes, len(batch))
	for i, item := range batch {
		f, err := decodeFeedbackReq(item, nil)
		if err == nil {
			rows[i], err = a.prepare(r, f)
		}
		if err != nil {
			return nil, prefixFieldErr(fmt.Sprintf("batch[%d]", i), err)
		}
		res[i] = createRes(rows[i])
	}
	if err := a.store.CreateFeedback(r.Context(), rows); err != nil {
		return nil, err
	}
	return map[string]any{"res": res}, nil
}

// prefixFieldErr locates a field error inside a list item.
func prefixFieldErr(prefix string, err error) error {
	if fe, ok := err.(*wire.FieldError); ok {
		return &wire.FieldError{Field: joinPath(prefix, fe.Field), Msg: fe.Msg, Unknown: fe.Unknown, Schema: fe.Schema}
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

func joinPath(a, b string) string {
	if b == "" {
		return a
	}
	return a + "." + b
}

func (a *FeedbackAPI) replace(r *http.Request, body []byte) (any, error) {
	var oldID string
	f, err := decodeFeedbackReq(body, &oldID)
	if err != nil {
		return nil, err
	}
	row, err := a.prepare(r, f)
	if err != nil {
		return nil, err
	}
	if err := a.store.ReplaceFeedback(r.Context(), f.ProjectID, oldID, row); err != nil {
		return nil, err
	}
	return createRes(row), nil
}

func (a *FeedbackAPI) query(r *http.Request, body []byte) (any, error) {
	q, err := decodeTableQuery(r, body, a.limits)
	if err != nil {
		return nil, err
	}
	res, err := a.store.QueryFeedback(r.Context(), storage.FeedbackQuery{ProjectID: q.ProjectID, Fields: q.Fields,
		Where: q.Query, SortBy: wire.StorageSort(q.SortBy), Limit: q.Limit, Offset: q.offset()})
	return wire.FeedbackQueryRes(res), err
}

func (a *FeedbackAPI) purge(r *http.Request, body []byte) (any, error) {
	projectID, ids, err := decodePurge(r, body, false, purgeFeedbackMsg, a.limits)
	if err != nil {
		return nil, err
	}
	if err := a.store.PurgeFeedback(r.Context(), projectID, ids); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}
