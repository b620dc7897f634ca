package gate

import (
	"crypto/tls"
	"net"

	"github.com/coagent8/coagent8/internal/fault"
)

// Listen opens the gate's listener on addr ("host:port"). Without a TLS
// configuration only a loopback IP or "localhost" is accepted (issue 9
// scope 6): the phantom credential then never crosses a network in clear
// text. With conf, the listener serves TLS on any address.
func Listen(addr string, conf *tls.Config) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, "gate.listen", "listen address must be host:port", err)
	}
	ip := net.ParseIP(host)
	loop := host == "localhost" || (ip != nil && ip.IsLoopback())
	if !loop && conf == nil {
		// `coagent8 gate serve` has no TLS setting: the message names the
		// remedy the user has, not one they cannot configure.
		return nil, fault.New(fault.PolicyDenied, "gate.listen",
			"the gate listens on a loopback address only (127.0.0.1, [::1] or localhost, with a port): "+
				"the phantom credential must not cross a network in clear text, and `coagent8 gate serve` serves no TLS").With("listen", host)
	}
	if loop && host == "localhost" {
		addr = net.JoinHostPort("127.0.0.1", addrPort(addr))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fault.Wrap(fault.ProcessError, "gate.listen", "cannot listen on "+addr, err)
	}
	if conf != nil {
		return tls.NewListener(ln, conf), nil
	}
	return ln, nil
}

func addrPort(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}
