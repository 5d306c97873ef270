package otlpreceiver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/storage"
)

// recorder is a consumer.Calls that keeps what it is given, or fails
// with err when set.
type recorder struct {
	mu    sync.Mutex
	parts []storage.CallPart
	err   error
	calls int
}

func (r *recorder) ConsumeCalls(_ context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.err != nil {
		return nil, r.err
	}
	for _, op := range ops {
		if op.Part == nil {
			return nil, errors.New("receiver submitted a non-part op")
		}
		r.parts = append(r.parts, *op.Part)
	}
	return make([]storage.CallOpResult, len(ops)), nil
}

func (r *recorder) snapshot() []storage.CallPart {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]storage.CallPart(nil), r.parts...)
}

func (r *recorder) byName(t *testing.T) map[string]storage.Call {
	t.Helper()
	out := map[string]storage.Call{}
	for _, p := range r.snapshot() {
		if p.Kind != storage.PartComplete {
			t.Errorf("part %s has kind %v, want complete", p.Call.OpName, p.Kind)
		}
		out[p.Call.OpName] = p.Call
	}
	return out
}

// The API key of the TS fixtures.
const fixtureKey = "0123456789abcdef0123456789abcdef01234567"

// keyring is a test auth.Verifier.
type keyring map[string]auth.Principal

func (k keyring) Verify(_ context.Context, key string) (auth.Principal, error) {
	p, ok := k[key]
	if !ok {
		return auth.Principal{}, fmt.Errorf("%w: unknown key", auth.ErrUnauthenticated)
	}
	return p, nil
}

func testKeys() keyring {
	return keyring{
		fixtureKey: {KeyID: "k1", UserID: "user-1", Entity: "acme", Role: auth.RoleMember},
		"viewer":   {KeyID: "k2", UserID: "user-2", Entity: "acme", Role: auth.RoleViewer},
		"broken":   {}, // a principal of no entity
	}
}

// failingVerifier cannot reach its key store.
type failingVerifier struct{}

func (failingVerifier) Verify(context.Context, string) (auth.Principal, error) {
	return auth.Principal{}, errors.New("key store is down")
}
