package inference

import "github.com/weftdev/weft/inference/catalog"

// upstreamName is the model name up is sent: the catalog's, or for a
// model following an alias, the name of the version that answers.
func (g *Gateway) upstreamName(ex *exchange, up *catalog.Upstream) string {
	return up.Model
}
