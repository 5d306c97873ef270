package auth

import (
	"errors"
	"testing"
)

func TestAdminAccess(t *testing.T) {
	tests := []struct {
		p      Principal
		entity string
		need   Access
		ok     bool
	}{
		{Principal{Entity: "acme", Role: RoleAdmin}, "acme", Admin, true},
		{Principal{Entity: AllEntities, Role: RoleAdmin}, "acme", Admin, true},
		{Principal{Entity: "acme", Role: RoleMember}, "acme", Admin, false},
		{Principal{Entity: "acme", Role: RoleViewer}, "acme", Admin, false},
		{Principal{Entity: "rival", Role: RoleAdmin}, "acme", Admin, false},
		{Principal{Entity: "acme", Role: RoleMember}, "acme", Write, true},
		{Principal{Entity: "acme", Role: RoleWorker}, "acme", Work, true},
		{Principal{Entity: AllEntities, Role: RoleWorker}, "acme", Work, true},
		{Principal{Entity: "rival", Role: RoleWorker}, "acme", Work, false},
		{Principal{Entity: "acme", Role: RoleAdmin}, "acme", Work, true},
		{Principal{Entity: "acme", Role: RoleMember}, "acme", Work, false},
		{Principal{Entity: "acme", Role: RoleViewer}, "acme", Work, false},
		{Principal{Entity: "acme", Role: RoleWorker}, "acme", Read, false},
		{Principal{Entity: "acme", Role: RoleWorker}, "acme", Write, false},
		{Principal{Entity: "acme", Role: RoleWorker}, "acme", Admin, false},
	}
	for _, tc := range tests {
		err := tc.p.AuthorizeEntity(tc.entity, tc.need)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrForbidden)) {
			t.Errorf("%+v on %s needing %d: %v, want ok=%v", tc.p, tc.entity, tc.need, err, tc.ok)
		}
		if err := tc.p.Authorize(tc.entity+"/p", tc.need); (err == nil) != tc.ok {
			t.Errorf("%+v on project %s/p: %v, want ok=%v", tc.p, tc.entity, err, tc.ok)
		}
	}
}
