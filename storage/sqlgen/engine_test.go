package sqlgen

import (
	"database/sql"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// engine is a database the row-level tests run statements on: the dialect
// to generate them with and a way to read back their rows. Rows come back
// as a DuckDB row holds them (see chRows), so one set of expected values
// serves every engine.
type engine struct {
	name string
	d    Dialect
	rows func(t testing.TB, st Statement) []map[string]any
}

// ids runs st and returns the id column in order.
func (e engine) ids(t testing.TB, st Statement) []string {
	t.Helper()
	var out []string
	for _, r := range e.rows(t, st) {
		out = append(out, r["id"].(string))
	}
	return out
}

func duckDBEngine(db *sql.DB) engine {
	return engine{name: "duckdb", d: NewDuckDB(), rows: func(t testing.TB, st Statement) []map[string]any {
		t.Helper()
		return queryRows(t, db, st)
	}}
}

func clickHouseEngine(conn driver.Conn) engine {
	return engine{name: "clickhouse", d: NewClickHouse(), rows: func(t testing.TB, st Statement) []map[string]any {
		t.Helper()
		return chRows(t, conn, st)
	}}
}

// duckDBFixture and clickHouseFixture hold callFixtures and
// feedbackFixtures.
func duckDBFixture(t testing.TB) engine { return duckDBEngine(fixtureDB(t)) }

func clickHouseFixture(t testing.TB) engine { return clickHouseEngine(chFixtureDB(t)) }

// duckDBThreads and clickHouseThreads hold threadFixtures.
func duckDBThreads(t testing.TB) engine {
	t.Helper()
	db := openDB(t)
	insertCalls(t, db, threadFixtures())
	return duckDBEngine(db)
}

func clickHouseThreads(t testing.TB) engine {
	return clickHouseEngine(openCH(t, threadFixtures(), nil))
}
