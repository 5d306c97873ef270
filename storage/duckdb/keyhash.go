package duckdb

import (
	"math/rand/v2"

	"github.com/zeebo/xxh3"
)

// keyHash hashes project-scoped ids for the id filter and the locator.
// Its seed is random per filter, so ids chosen to collide in one store do
// not collide in another, and it is saved with their snapshot
// (keysnapshot.go), which a maphash seed cannot be.
type keyHash struct{ seed uint64 }

func newKeyHash() keyHash { return keyHash{seed: rand.Uint64()} }

// sum hashes id within project: the project's hash seeds the id's, which
// keeps equal ids of two projects apart.
func (k keyHash) sum(project, id string) uint64 {
	return xxh3.HashStringSeed(id, xxh3.HashStringSeed(project, k.seed))
}
