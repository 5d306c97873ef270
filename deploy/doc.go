// Package deploy holds the tests of what platform teams install Weft with:
// the Helm chart in helm/weft and the Prometheus alerting rules in
// prometheus. It has no code of its own.
package deploy
