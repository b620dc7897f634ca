package operator

import "net/http"

// csp allows scripts, styles, images and fetches from this server only
// (everything is embedded), no inline script or style, no plugins, no
// framing, no base or form target elsewhere.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// setSecurityHeaders is written on every response, refusals included.
// Nothing here, or anywhere in the package, sets an Access-Control-*
// header.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// proxyHeaders are the forwarding and edge-identity headers a request
// through a proxy, tunnel or edge would carry. Their presence refuses the
// request: none of them is ever read as identity.
var proxyHeaders = []string{
	"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Forwarded-Port",
	"X-Forwarded-User", "X-Forwarded-Email", "X-Real-Ip", "X-Remote-User", "X-Remote-Addr",
	"X-Original-Url", "X-Client-Ip", "Cf-Connecting-Ip", "True-Client-Ip", "Via",
}

func proxied(h http.Header) bool {
	for _, k := range proxyHeaders {
		if _, ok := h[k]; ok {
			return true
		}
	}
	return false
}
