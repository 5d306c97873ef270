package sqlgen

import "testing"

// The threads tests of threads_test.go, on ClickHouse.

func TestClickHouseThreadsRow(t *testing.T) { testThreadsRow(t, clickHouseThreads(t)) }

func TestClickHouseThreadsQuery(t *testing.T) { testThreadsQuery(t, clickHouseThreads(t)) }
