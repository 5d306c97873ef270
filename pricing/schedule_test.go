package pricing

import (
	"testing"
	"time"
)

// TestScheduleAgreesWithBest checks that looking a call's start up in the
// schedule gives the price Best picks, around every effective date.
func TestScheduleAgreesWithBest(t *testing.T) {
	def := func(id, date string, c float64) Price {
		return Price{ID: "d-" + id + date, LLMID: id, Level: LevelDefault, EffectiveDate: day(date), PromptTokenCost: c}
	}
	proj := func(id, date string, c float64) Price {
		return Price{ID: "p-" + id + date, LLMID: id, Level: LevelProject, EffectiveDate: day(date), PromptTokenCost: c}
	}
	// Before its first date a model is priced at the price Best ranks
	// first among those not yet in effect, hence a leading span.
	cases := []struct {
		name   string
		prices []Price
		spans  int
	}{
		{"one default", []Price{def("a", "2024-01-01", 1)}, 1},
		{"defaults by date", []Price{def("a", "2024-03-01", 2), def("a", "2024-01-01", 1)}, 3},
		{"override later", []Price{def("a", "2024-01-01", 1), proj("a", "2024-06-01", 5)}, 3},
		{"override earlier", []Price{proj("a", "2023-01-01", 5), def("a", "2024-01-01", 1)}, 1},
		{"two models", []Price{def("a", "2024-01-01", 1), def("b", "2024-02-01", 2), proj("b", "2024-04-01", 3)}, 4},
		{"same date", []Price{def("a", "2024-01-01", 1), proj("a", "2024-01-01", 4)}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spans := Schedule(tc.prices)
			if len(spans) != tc.spans {
				t.Fatalf("got %d spans %+v, want %d", len(spans), spans, tc.spans)
			}
			for _, p := range tc.prices {
				for _, at := range []time.Time{p.EffectiveDate.Add(-time.Microsecond), p.EffectiveDate, p.EffectiveDate.Add(time.Hour)} {
					want, _ := Best(p.LLMID, at, tc.prices)
					if got, ok := lookup(spans, p.LLMID, at); !ok || got.ID != want.ID {
						t.Errorf("%s at %s: schedule gives %q, Best %q", p.LLMID, at, got.ID, want.ID)
					}
				}
			}
		})
	}
}

func lookup(spans []Span, id string, at time.Time) (Price, bool) {
	for _, s := range spans {
		if s.LLMID == id && (s.From.IsZero() || !at.Before(s.From)) && (s.To.IsZero() || at.Before(s.To)) {
			return s.Price, true
		}
	}
	return Price{}, false
}

func TestScheduleOfNothing(t *testing.T) {
	if got := Schedule(nil); len(got) != 0 {
		t.Fatalf("Schedule(nil) = %+v", got)
	}
}
