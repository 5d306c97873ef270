package storekit

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weftdev/weft/storage"
)

// Column lists of the automations tables, the same in both backends.
const (
	WebhookColumns = `entity, id, name, url, access_token_secret, signing_secret, created_at, updated_at,
	failing_since, disabled_at, disabled_reason`
	AutomationColumns = `project_id, id, name, description, scope, collection, collection_filter, event,
	alias_regex, webhook_id, payload, enabled, created_by, created_at, updated_at, condition`
	EventColumns    = "id, type, project_id, collection, version_index, digest, aliases, source, author, metadata, occurred_at"
	DeliveryColumns = `id, project_id, automation_id, entity, webhook_id, event_id, event_type, body, preview,
	state, attempts, next_attempt_at, retry_from, lease_owner, lease_until, last_attempt_at, last_status,
	last_error, last_response, last_latency_ms, created_at, updated_at`
)

// First returns the first of rows read for one key, or ErrNotFound
// with notFound's message.
func First[T any](rows []T, err error, notFound string) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	if len(rows) == 0 {
		return zero, fmt.Errorf("%s: %w", notFound, storage.ErrNotFound)
	}
	return rows[0], nil
}

// InUse refuses removing what is still referenced: ErrConflict naming
// the users, or nil when there are none.
func InUse(what string, users []string, fix string) error {
	if len(users) == 0 {
		return nil
	}
	return fmt.Errorf("%s is used by %s; %s: %w", what, strings.Join(users, ", "), fix, storage.ErrConflict)
}

// EncodeAliases is the stored form of an event's aliases: a JSON array,
// which both backends keep as text.
func EncodeAliases(aliases []string) string {
	if aliases == nil {
		aliases = []string{}
	}
	b, _ := json.Marshal(aliases) // a []string always encodes
	return string(b)
}

// DecodeAliases reads EncodeAliases's form back.
func DecodeAliases(s string) ([]string, error) {
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("stored aliases %q: %w", s, err)
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// EventMetadata is the stored form of an event's metadata: {} when none.
func EventMetadata(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return json.RawMessage("{}")
	}
	return m
}

// DeliveryDue reports whether a worker may claim d at now: pending, due,
// and not leased to a worker still within its lease.
func DeliveryDue(d storage.Delivery, now time.Time) bool {
	return d.State == storage.DeliveryPending && !d.NextAttemptAt.After(now) &&
		(d.LeaseUntil == nil || !d.LeaseUntil.After(now))
}

// SortDeliveriesDue orders deliveries as workers take them: earliest
// due first, then by id.
func SortDeliveriesDue(ds []storage.Delivery) {
	slices.SortFunc(ds, func(a, b storage.Delivery) int {
		if c := a.NextAttemptAt.Compare(b.NextAttemptAt); c != 0 {
			return c
		}
		return compareStrings(a.ID, b.ID)
	})
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
