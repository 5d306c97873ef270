package auth

import (
	"context"
	"reflect"
	"testing"
	"time"
)

func TestStoreUsersNamesKnownUsers(t *testing.T) {
	store := NewFileStore(t.TempDir())
	ctx := context.Background()
	for _, u := range []string{"ada", "grace"} {
		k, _, err := NewKey("acme", RoleMember, u, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := store.PutKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.RevokeKey(ctx, mustKeyOf(t, store, "grace"), time.Now()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ids  []string
		want map[string]string
	}{
		{[]string{"ada"}, map[string]string{"ada": "ada"}},
		{[]string{"ada", "grace", "nobody"}, map[string]string{"ada": "ada", "grace": "grace"}},
		{nil, map[string]string{}},
	}
	for _, tt := range tests {
		got, err := StoreUsers{Store: store}.UserNames(ctx, tt.ids)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("UserNames(%v) = %v, %v; want %v", tt.ids, got, err, tt.want)
		}
	}
}

func mustKeyOf(t *testing.T, store KeyStore, user string) string {
	t.Helper()
	keys, err := store.ListKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.UserID == user {
			return k.ID
		}
	}
	t.Fatalf("no key of %s", user)
	return ""
}
