package providertest

import "net/http"

// Echo says where a 200 answer echoes the credential the double received
// (for the gate's "nothing real comes back" tests). The zero value echoes
// nothing.
type Echo string

// Echo places.
const (
	// EchoErrorEvent ends the stream after the first text delta with an
	// error event carrying the credential: Anthropic `event: error`
	// (overloaded_error), OpenAI `event: error`.
	EchoErrorEvent Echo = "error_event"
	// EchoResponseFailed ends an OpenAI stream with `response.failed`
	// whose error message carries the credential (Anthropic: as
	// EchoErrorEvent).
	EchoResponseFailed Echo = "response_failed"
	// EchoText puts the credential in a text delta.
	EchoText Echo = "text"
	// EchoHeader sends it in the response header X-Upstream-Debug.
	EchoHeader Echo = "header"
	// EchoTrailer announces the trailer X-Upstream-Debug and sends the
	// credential in it after the body.
	EchoTrailer Echo = "trailer"
)

// EchoHeaderName is the header (or trailer) EchoHeader and EchoTrailer use.
const EchoHeaderName = "X-Upstream-Debug"

// echoHead sets up the header or trailer echo before the status is written.
func echoHead(w http.ResponseWriter, rep Reply, cred string) {
	switch rep.Echo {
	case EchoHeader:
		w.Header().Set(EchoHeaderName, "key="+cred)
	case EchoTrailer:
		w.Header().Set("Trailer", EchoHeaderName)
	}
}

// echoTail sends the trailer echo after the body.
func echoTail(w http.ResponseWriter, rep Reply, cred string) {
	if rep.Echo == EchoTrailer {
		w.Header().Set(EchoHeaderName, "key="+cred)
	}
}
