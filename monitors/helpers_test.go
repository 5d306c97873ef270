package monitors

import (
	"encoding/json"

	"github.com/weftdev/weft/storage"
)

// storageCallFor is a call whose inputs and output are raw.
func storageCallFor(raw string) storage.Call {
	return storage.Call{ID: "c", Inputs: json.RawMessage(raw), Output: json.RawMessage(raw)}
}
