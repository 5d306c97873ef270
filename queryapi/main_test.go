package queryapi_test

import (
	"os"
	"testing"

	"github.com/weftdev/weft/internal/chfront"
)

// TestMain owns the embedded ClickHouse engine the ClickHouse cases share.
func TestMain(m *testing.M) { os.Exit(chfront.RunTests(m)) }
