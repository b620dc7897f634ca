package gate

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/fault"
)

// routeIntermediaries validates o.Intermediaries against the upstream
// origins and, when there are any, makes o.Transport route each
// provider's requests through its intermediary. It returns the
// intermediaries' canonical origins per provider, the custody route's
// hops (issue 18 scope 5).
func routeIntermediaries(o *Options, origins map[Provider]*url.URL) (map[Provider][]string, error) {
	if len(o.Intermediaries) == 0 {
		return nil, nil
	}
	bad := func(msg string) error { return fault.New(fault.InvalidInput, "gate.intermediary", msg) }
	hops, byHost := map[Provider][]string{}, map[string]*url.URL{}
	for p, s := range o.Intermediaries {
		origin, ok := origins[p]
		if !ok {
			return nil, bad("intermediary for unknown provider " + string(p))
		}
		u, err := proxyURL(s)
		if err != nil {
			return nil, bad(string(p) + ": " + err.Error())
		}
		hops[p] = []string{egress.CanonicalOrigin(u.String())}
		byHost[origin.Scheme+"://"+origin.Host] = u
	}
	tr, ok := o.Transport.(*http.Transport)
	if !ok {
		return nil, bad("intermediaries need the gate's own transport or an *http.Transport")
	}
	tr = tr.Clone()
	// The proxy is chosen by the request's upstream origin alone, never
	// from the environment: the gate's only egress stays the configured
	// route, and a provider without an intermediary is reached directly.
	tr.Proxy = func(r *http.Request) (*url.URL, error) {
		return byHost[r.URL.Scheme+"://"+r.URL.Host], nil
	}
	o.Transport = tr
	return hops, nil
}

// proxyURL parses an intermediary's origin: http or https, a host, no
// path, query or user info (a proxy password would be a literal
// credential in the configuration).
func proxyURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		return nil, errors.New("intermediary must be an origin like https://proxy.example:3128")
	case u.User != nil:
		return nil, errors.New("intermediary must not carry user info (credentials are never literal)")
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return nil, errors.New("intermediary must be an origin, without path or query")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("intermediary must use http or https")
	}
	u.Path, u.Host = "", strings.ToLower(u.Host)
	return u, nil
}
