package wire

import "github.com/weftdev/weft/storage"

// ThreadSchema is one line of /threads/stream_query.
type ThreadSchema struct {
	ThreadID          string   `json:"thread_id"`
	TurnCount         int64    `json:"turn_count"`
	StartTime         Time     `json:"start_time"`
	LastUpdated       Time     `json:"last_updated"`
	FirstTurnID       string   `json:"first_turn_id"`
	LastTurnID        string   `json:"last_turn_id"`
	P50TurnDurationMS *float64 `json:"p50_turn_duration_ms"`
	P99TurnDurationMS *float64 `json:"p99_turn_duration_ms"`
}

// NewThreadSchema renders a stored thread.
func NewThreadSchema(th storage.Thread) ThreadSchema {
	return ThreadSchema{
		ThreadID: th.ThreadID, TurnCount: th.TurnCount,
		StartTime: Time{th.StartTime}, LastUpdated: Time{th.LastUpdated},
		FirstTurnID: th.FirstTurnID, LastTurnID: th.LastTurnID,
		P50TurnDurationMS: th.P50TurnDurationMS, P99TurnDurationMS: th.P99TurnDurationMS,
	}
}
