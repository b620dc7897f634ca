// Package upstream parses the one test seam that overrides where the gate
// forwards a provider: a loopback provider double (UnsafeVar). It imports
// no more than strings and net/url, and lives outside package config so
// that config (on the sandbox entry path) does not pull net/url into the
// initialisers that run before a sandboxed child starts.
package upstream

import (
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
)

// UnsafeVar names a loopback provider double the in-process gate
// forwards delegate jobs to, as PROVIDER=http://127.0.0.1:PORT. It exists
// for tests and benchmarks only: the real credential then travels in clear
// text to a local process, so doctor warns while it is set and the gate
// records a security event when it applies it.
const UnsafeVar = "COAGENT8_UNSAFE_LOOPBACK_UPSTREAM"

// ReasonUnsafe is the reason of a refused UnsafeVar value
// and of the security event recording that it was applied.
const ReasonUnsafe = "delegate.unsafe_upstream"

// Unsafe is a parsed UnsafeVar: a provider id
// ("anthropic", "openai") and an origin "http(s)://LOOPBACK:PORT".
type Unsafe struct {
	Provider string
	Origin   string
}

// ParseUnsafe parses v (the value of UnsafeVar). It
// accepts only PROVIDER=SCHEME://HOST:PORT where PROVIDER is anthropic or
// openai, SCHEME is http or https, HOST is 127.0.0.1, [::1] or localhost,
// PORT is 1–65535, and nothing follows but an optional "/". Anything else
// is an INVALID_INPUT [fault.Error] with reason [ReasonUnsafe]
// naming what is wrong: the variable must never redirect a real credential
// to a remote host.
func ParseUnsafe(v string) (Unsafe, error) {
	return ParseUnsafeFrom(UnsafeVar, v)
}

// ParseUnsafeFrom is [ParseUnsafe] for a value that came
// from name (the variable, or `gate serve --unsafe-loopback-upstream`),
// which the error names.
func ParseUnsafeFrom(name, v string) (Unsafe, error) {
	bad := func(why string) (Unsafe, error) {
		return Unsafe{}, fault.New(fault.InvalidInput, ReasonUnsafe,
			name+" wants PROVIDER=http://127.0.0.1:PORT (tests only): "+why)
	}
	p, origin, ok := strings.Cut(v, "=")
	if !ok {
		return bad("no '=' between provider and URL")
	}
	if p != "anthropic" && p != "openai" {
		return bad("provider " + strconv.Quote(p) + " is not anthropic or openai")
	}
	u, err := url.Parse(origin)
	switch {
	case err != nil:
		return bad("the URL does not parse")
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("the URL scheme is not http or https")
	case u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return bad("the URL is not an origin (no user, path, query or fragment)")
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !(ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback))) {
		return bad("host " + strconv.Quote(host) + " is not 127.0.0.1, [::1] or localhost")
	}
	if n, err := strconv.Atoi(u.Port()); err != nil || n < 1 || n > 65535 {
		return bad("the URL has no port in 1-65535")
	}
	return Unsafe{Provider: p, Origin: u.Scheme + "://" + u.Host}, nil
}
