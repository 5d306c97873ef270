package duckdb

import (
	"testing"

	"github.com/weftdev/weft/storage/conformance"
)

func TestConformance(t *testing.T) {
	conformance.RunAll(t, func(t *testing.T) conformance.Store { return openTestStore(t) })
}
