package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"

	"github.com/coagent8/coagent8/internal/price"
	"github.com/coagent8/coagent8/internal/redact"
)

// refreshCause says in a few words why `prices refresh` failed: the
// terminal user ran it and needs the reason. Known causes become fixed
// phrases naming at most the host; anything else is the error text after
// diagnostic redaction (it may carry the URL the user gave).
func refreshCause(err error, red *redact.Redactor) string {
	var dns *net.DNSError
	var status *price.StatusError
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var certVerify *tls.CertificateVerificationError
	var ue *url.Error
	switch {
	case errors.As(err, &status):
		return "the server answered " + status.Error()
	case errors.As(err, &dns):
		return fmt.Sprintf("DNS lookup of %s failed (%s)", dns.Name, dnsReason(dns))
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ue) && ue.Timeout():
		return "timed out"
	case errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &certVerify):
		return "the server's TLS certificate was not accepted"
	case errors.As(err, &syntax), errors.As(err, &typeErr):
		return "the answer is not a valid JSON model list"
	case errors.Is(err, price.ErrNoData):
		return `the answer has no "data" array (not an OpenRouter model list)`
	case errors.Is(err, price.ErrNoPrices):
		return "the list has no priced models"
	case errors.Is(err, price.ErrTooLarge):
		return fmt.Sprintf("the list is larger than %d MiB", price.MaxListBytes>>20)
	}
	return red.String(err.Error())
}

func dnsReason(e *net.DNSError) string {
	switch {
	case e.IsNotFound:
		return "no such host"
	case e.IsTimeout:
		return "timed out"
	}
	return "resolver error"
}
