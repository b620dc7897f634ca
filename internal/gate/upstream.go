package gate

import (
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// defaultOrigins are the production upstreams: fixed, HTTPS, port 443.
var defaultOrigins = map[Provider]string{
	Anthropic: "https://api.anthropic.com",
	OpenAI:    "https://api.openai.com",
}

// origins validates the upstream of every provider. An origin is scheme and
// host only; http is admitted only for a loopback IP under
// UnsafeAllowLoopbackUpstream, and a loopback host only under it too.
func origins(o Options) (map[Provider]*url.URL, error) {
	out := map[Provider]*url.URL{}
	for p, def := range defaultOrigins {
		s := def
		if v, ok := o.Upstreams[p]; ok {
			s = v
		}
		u, err := checkOrigin(s, o.UnsafeAllowLoopbackUpstream)
		if err != nil {
			return nil, err
		}
		out[p] = u
	}
	for p := range o.Upstreams {
		if _, ok := defaultOrigins[p]; !ok {
			return nil, fault.New(fault.InvalidInput, "gate.upstream", "upstream for unknown provider "+string(p))
		}
	}
	return out, nil
}

func checkOrigin(s string, unsafeLoopback bool) (*url.URL, error) {
	bad := func(msg string) error { return fault.New(fault.InvalidInput, "gate.upstream", msg) }
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, bad("upstream must be an origin like https://api.example.com")
	}
	u.Path = ""
	ip := net.ParseIP(u.Hostname())
	loop := u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback())
	switch {
	case loop && !unsafeLoopback:
		return nil, bad("a loopback upstream needs UnsafeAllowLoopbackUpstream (tests only)")
	case u.Scheme == "https":
		return u, nil
	case u.Scheme == "http" && loop && ip != nil:
		return u, nil
	}
	return nil, bad("upstream must use https")
}

// newTransport returns the upstream transport: no proxy from the
// environment (the gate is the only egress and must not be redirected by
// an ambient HTTPS_PROXY), bounded dials and header waits.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 10 * time.Minute,
		DisableCompression:    true, // metering reads the bytes as sent
	}
}
