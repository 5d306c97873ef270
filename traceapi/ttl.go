package traceapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// maxRetentionDays bounds a retention set through the API: a hundred
// years is as good as forever, and keeps expiry times far from overflow.
const maxRetentionDays = 36_500

// RetentionSettings is the retention the process applies: the config's
// and the changes made through the API.
type RetentionSettings interface {
	// Current is the retention of a call of project starting now; 0
	// keeps it forever.
	Current(projectID string) time.Duration
	// Reload reads the changes from the store now.
	Reload(ctx context.Context) error
}

// TTLAPI serves /project/ttl_settings/read and /update: how long a
// project keeps its calls.
type TTLAPI struct {
	store    storage.RetentionStore
	settings RetentionSettings
	logger   *slog.Logger
	maxBytes int64
	now      func() time.Time
}

// NewTTLAPI builds the TTL settings endpoints: changes go to store,
// answers come from settings.
func NewTTLAPI(store storage.RetentionStore, settings RetentionSettings, maxBodyBytes int64, logger *slog.Logger) *TTLAPI {
	return &TTLAPI{store: store, settings: settings, logger: logger, maxBytes: maxBodyBytes, now: time.Now}
}

// Register adds the routes to mux; wrap is applied to every handler.
func (a *TTLAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	mux.Handle("POST /project/ttl_settings/read", wrap(httpapi.JSON(a.logger, a.maxBytes, a.read)))
	mux.Handle("POST /project/ttl_settings/update", wrap(httpapi.JSON(a.logger, a.maxBytes, a.update)))
}

// retentionDays is the wire form of a retention: whole days, rounded up
// (a configured 36h reads as 2), null for forever.
func retentionDays(keep time.Duration) *int {
	if keep <= 0 {
		return nil
	}
	days := int((keep + 24*time.Hour - 1) / (24 * time.Hour))
	return &days
}

func (a *TTLAPI) read(r *http.Request, body []byte) (any, error) {
	var projectID string
	if err := wire.DecodeTop(body, wire.Fields{"project_id": &projectID}, "project_id"); err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), projectID, auth.Read); err != nil {
		return nil, err
	}
	return map[string]*int{"retention_days": retentionDays(a.settings.Current(projectID))}, nil
}

// update appends a change: calls that start from now on are kept for
// retention_days (null: forever); calls stored before keep the
// retention they had. Changing what a project keeps is an admin's call.
func (a *TTLAPI) update(r *http.Request, body []byte) (any, error) {
	var projectID, userID string
	var days *int
	err := wire.DecodeTop(body, wire.Fields{"project_id": &projectID, "retention_days": &days, "wb_user_id": &userID}, "project_id")
	if err != nil {
		return nil, err
	}
	if days != nil && (*days < 1 || *days > maxRetentionDays) {
		return nil, &wire.FieldError{Field: "retention_days",
			Msg: fmt.Sprintf("is %d; it must be null (keep calls forever) or between 1 and %d days", *days, maxRetentionDays)}
	}
	p, err := httpapi.Authorize(r.Context(), projectID, auth.Admin)
	if err != nil {
		return nil, err
	}
	c := storage.RetentionChange{ProjectID: projectID, At: a.now().UTC().Truncate(time.Microsecond), By: p.UserID}
	if days != nil {
		c.Days = *days
	}
	if err := a.store.AddRetentionChange(r.Context(), c); err != nil {
		return nil, err
	}
	if err := a.settings.Reload(r.Context()); err != nil {
		return nil, fmt.Errorf("retention stored; reading it back: %w", err)
	}
	return map[string]*int{"retention_days": days}, nil
}
