package storekit

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/weftdev/weft/storage"
)

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
