package storekit

import (
	"fmt"

	"github.com/weftdev/weft/storage"
)

// FileName checks an upload's project and returns the name to store: the
// part's own, or storage.DefaultFileName when it has none.
func FileName(req storage.FileCreateReq) (string, error) {
	if req.ProjectID == "" {
		return "", fmt.Errorf("project_id is required: %w", storage.ErrInvalidArgument)
	}
	if req.Name == "" {
		return storage.DefaultFileName, nil
	}
	return req.Name, nil
}
