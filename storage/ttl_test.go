package storage

import (
	"testing"
	"time"
)

func TestRetentionFor(t *testing.T) {
	day := 24 * time.Hour
	t0 := time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC)
	r := Retention{Default: 30 * day, Projects: map[string]time.Duration{"a/fixed": 7 * day}}.WithChanges([]RetentionChange{
		{ProjectID: "a/p", Days: 3, At: t0},
		{ProjectID: "a/p", Days: 0, At: t0.Add(day)},
	})
	cases := []struct {
		project string
		start   time.Time
		want    time.Duration
	}{
		{"a/p", t0.Add(-time.Second), 30 * day}, // before the first change: the configured default
		{"a/p", t0, 3 * day},                    // a change made the instant the call started is in force
		{"a/p", t0.Add(time.Hour), 3 * day},
		{"a/p", t0.Add(2 * day), 0}, // the later change keeps calls forever
		{"a/fixed", t0, 7 * day},
		{"b/other", t0, 30 * day},
	}
	for _, tc := range cases {
		if got := r.For(tc.project, tc.start); got != tc.want {
			t.Errorf("For(%s, %v) = %v; want %v", tc.project, tc.start, got, tc.want)
		}
	}
	if got := r.Current("a/p"); got != 0 {
		t.Errorf("Current(a/p) = %v; want 0 (the latest change)", got)
	}
	if !(Retention{Changes: map[string][]RetentionChange{"x/y": {{Days: 1}}}}).Enabled() {
		t.Error("a change that expires calls does not enable retention")
	}
}
