package traceapi

import (
	"context"
	"fmt"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// UserNames resolves user ids (wb_user_id) to user names.
type UserNames interface {
	// UserNames returns the names of the ids it knows; unknown ids are
	// left out.
	UserNames(ctx context.Context, userIDs []string) (map[string]string, error)
}

// base is what every call gets without a lookup of its own: expire_at
// from the project's retention, and wb_username from the batch's names.
func (e *enricher) base(c storage.StoredCall) wire.Extras {
	var x wire.Extras
	if e.src.Retention != nil && !c.StartedAt.IsZero() {
		if keep := e.src.Retention(c.ProjectID, c.StartedAt); keep > 0 {
			at := c.StartedAt.Add(keep)
			x.ExpireAt = &at
		}
	}
	if e.wantUsernames {
		x.Username = e.usernames[c.WBUserID]
	}
	return x
}

// loadUsernames resolves the user ids of a batch for include_usernames.
func (e *enricher) loadUsernames(ctx context.Context, calls []storage.StoredCall) error {
	if !e.wantUsernames {
		return nil
	}
	seen := map[string]bool{}
	var ids []string
	for _, c := range calls {
		if c.WBUserID != "" && !seen[c.WBUserID] {
			seen[c.WBUserID] = true
			ids = append(ids, c.WBUserID)
		}
	}
	names, err := e.src.Users.UserNames(ctx, ids)
	if err != nil {
		return fmt.Errorf("include_usernames: %w", err)
	}
	e.usernames = names
	return nil
}
