package sqlgen

import (
	"testing"

	"github.com/weftdev/weft/storage"
)

func sortBy(pairs ...string) []storage.SortBy {
	var out []storage.SortBy
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, storage.SortBy{Field: pairs[i], Direction: pairs[i+1]})
	}
	return out
}

func TestSort(t *testing.T) {
	runIDCases(t, duckDBFixture(t), sortCases())
}
