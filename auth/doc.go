// Package auth owns API keys and the access model: a key belongs to a user
// who is a member of entities with a role (admin, member, viewer). It turns
// request credentials into a Principal and answers whether that principal
// may read or write a project ("entity/project").
//
// It must never import storage backends, receivers or the query API; key
// persistence is behind the KeyStore interface.
package auth
