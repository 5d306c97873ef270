package chfront

import (
	"bytes"
	"fmt"
	"strings"

	chproto "github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2/lib/proto"
)

// helloQuery is the exact text clickhouse-go (v2.50.0, pinned in go.mod) sends
// over HTTP to learn the server's name, version, revision and time zone.
const helloQuery = "SELECT displayName(), version(), revision(), timezone()"

// helloRewrite reports revision 0. The engine writes Native output at
// revision 0 whatever the client asks for (no block info, no per-column
// serialization byte), and clickhouse-go decodes every later response at the
// revision the hello returned, so claiming 0 makes both sides agree for every
// column type. Re-encoding each response instead would break JSON and Dynamic
// columns.
const helloRewrite = "SELECT displayName(), version(), toUInt32(0) AS `revision()`, timezone()"

func isHello(sql string) bool {
	return strings.Join(strings.Fields(sql), " ") == helloQuery
}

// reencodeHello converts the hello reply from the engine's revision-0 Native
// to the revision the client decodes the hello itself at (its
// client_protocol_version).
func reencodeHello(native []byte, revision uint64) ([]byte, error) {
	var block proto.Block
	if err := block.Decode(chproto.NewReader(bytes.NewReader(native)), 0); err != nil {
		return nil, fmt.Errorf("decode hello reply: %w", err)
	}
	var buf chproto.Buffer
	if err := block.Encode(&buf, revision); err != nil {
		return nil, fmt.Errorf("encode hello reply: %w", err)
	}
	return buf.Buf, nil
}
