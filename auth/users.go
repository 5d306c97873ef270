package auth

import "context"

// StoreUsers names the users of a KeyStore. Weft keeps no user profiles:
// a user is the user id its keys were made for (weft keys create --user),
// which is also its name.
type StoreUsers struct {
	Store KeyStore
}

// UserNames returns the names of the ids some key, revoked or not, was
// made for; other ids are left out.
func (u StoreUsers) UserNames(ctx context.Context, userIDs []string) (map[string]string, error) {
	want := make(map[string]bool, len(userIDs))
	for _, id := range userIDs {
		want[id] = true
	}
	keys, err := u.Store.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, k := range keys {
		if want[k.UserID] {
			out[k.UserID] = k.UserID
		}
	}
	return out, nil
}
