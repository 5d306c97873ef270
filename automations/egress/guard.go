// Package egress is the outbound HTTP client of webhook deliveries and
// tests. It refuses to connect to private, loopback, link-local and other
// non-public addresses unless the configuration allows their network,
// and it checks the address actually dialled, after DNS resolution, so a
// name that resolves (or rebinds) to an internal address gets nowhere.
// It follows no redirects and uses no proxy.
//
// It imports nothing of the project.
package egress

import (
	"fmt"
	"net/netip"
)

// blockedRanges are the networks no webhook may reach by default: the
// non-public ranges of the IANA special-purpose registries (the list
// Svix's resolver filter uses, plus NAT64 and 6to4 prefixes that embed
// IPv4 addresses).
var blockedRanges = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this-network"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved or broadcast"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// Embedding prefixes carry an IPv4 address that is checked in its turn.
var (
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	sixTo = netip.MustParsePrefix("2002::/16")
)

// Guard decides which addresses outbound requests may reach.
type Guard struct {
	allowed []netip.Prefix
}

// NewGuard refuses the blocked ranges except within allowed.
func NewGuard(allowed []netip.Prefix) *Guard {
	return &Guard{allowed: allowed}
}

// BlockedError is a refused address, with the range it is in.
type BlockedError struct {
	Addr  netip.Addr
	Range string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("address %s is %s; webhooks may not reach it unless automations.allowed_networks lists its network",
		e.Addr, e.Range)
}

// Check refuses addr unless it is public or in an allowed network.
// IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
func (g *Guard) Check(addr netip.Addr) error {
	addr = addr.Unmap().WithZone("")
	for _, p := range g.allowed {
		if p.Contains(addr) {
			return nil
		}
	}
	if embedded, ok := embeddedIPv4(addr); ok {
		if err := g.Check(embedded); err != nil {
			return err
		}
	}
	for _, r := range blockedRanges {
		if r.prefix.Contains(addr) {
			return &BlockedError{Addr: addr, Range: r.what}
		}
	}
	return nil
}

// embeddedIPv4 is the IPv4 address a NAT64 or 6to4 address carries.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case !a.Is6():
		return netip.Addr{}, false
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixTo.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}
