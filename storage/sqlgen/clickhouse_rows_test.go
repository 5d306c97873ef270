package sqlgen

import (
	"testing"

	"github.com/weftdev/weft/storage"
)

// The row-level tests of count_test.go, select_test.go, errors_test.go and
// injection_test.go, on ClickHouse.

func TestClickHouseCallsCount(t *testing.T) { testCallsCount(t, clickHouseFixture(t)) }

func TestClickHouseLimitOffset(t *testing.T) {
	testLimitOffset(t, clickHouseFixture(t), chUnsortedPages())
}

// chUnsortedPages are pages of an empty sort: ClickHouse cuts them in
// page-key order, by (anchor_at, id).
func chUnsortedPages() []pageCase {
	byKey := []string{"c01", "c08", "c02", "c03", "c04", "c05"}
	return []pageCase{
		{2, 0, []storage.SortBy{}, sorted(byKey[:2])},
		{3, 2, []storage.SortBy{}, sorted(byKey[2:5])},
	}
}

func TestClickHouseSelectColumns(t *testing.T) { testSelectColumns(t, clickHouseFixture(t)) }

func TestClickHouseProjection(t *testing.T) { testProjection(t, clickHouseFixture(t)) }

func TestClickHouseStorageSizes(t *testing.T) { testStorageSizes(t, clickHouseFixture(t)) }

func TestClickHouseNullQueryAndScope(t *testing.T) {
	e := clickHouseFixture(t)
	testNullQuery(t, e)
	testProjectScope(t, e)
}

func TestClickHouseUserValuesAreBound(t *testing.T) { testUserValuesAreBound(t, clickHouseFixture(t)) }
