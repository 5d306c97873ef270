package pricing

import (
	"testing"
	"time"
)

func TestWithReplacesRowsOfTheSameModel(t *testing.T) {
	base, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	shipped := len(base.For([]string{"gpt-4o"}))
	if shipped == 0 {
		t.Fatal("shipped table has no gpt-4o row")
	}
	epoch := time.Unix(0, 0).UTC()
	extra := []Price{
		{LLMID: "gpt-4o", Level: LevelDefault, EffectiveDate: epoch, PromptTokenCost: 1e-9},
		{LLMID: "acme/llama", Level: LevelDefault, EffectiveDate: epoch, PromptTokenCost: 2e-9},
	}
	got := base.With(extra)
	tests := []struct {
		model string
		want  float64
	}{{"gpt-4o", 1e-9}, {"acme/llama", 2e-9}}
	for _, tc := range tests {
		rows := got.For([]string{tc.model})
		best, ok := Best(tc.model, time.Now(), rows)
		if len(rows) != 1 || !ok || best.PromptTokenCost != tc.want {
			t.Errorf("%s: rows %+v, best %+v; want only the added price %g", tc.model, rows, best, tc.want)
		}
	}
	if got.Len() != base.Len()-shipped+2 {
		t.Errorf("Len = %d, want %d", got.Len(), base.Len()-shipped+2)
	}
	if len(base.For([]string{"gpt-4o"})) != shipped || len(base.For([]string{"acme/llama"})) != 0 {
		t.Error("With changed the table it was called on")
	}
}
