package duckdb

import (
	"testing"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/conformance"
)

func TestCostsConformance(t *testing.T) {
	conformance.RunCosts(t, func(t *testing.T) storage.CostStore { return openTestStore(t) })
}
