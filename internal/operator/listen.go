package operator

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/coagent8/coagent8/internal/fault"
)

// DefaultPort is the port `coagent8 operator` listens on without --port.
const DefaultPort = 8317

// Listen opens a TCP listener on addr ("127.0.0.1:PORT" or "[::1]:PORT";
// port 0 picks a free one). Any other host — another loopback address, a
// name such as localhost (a name can be rebound), the unspecified address
// or a routable one — is refused with a *fault.Error INVALID_INPUT, reason
// operator.non_loopback, before anything listens. There is no
// option to widen it.
func Listen(addr string) (net.Listener, error) {
	ap, err := parseLoopback(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", ap.String())
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, "operator.listen",
			fmt.Sprintf("cannot listen on %s (is another dashboard running? pick another --port)", ap), err)
	}
	return ln, nil
}

// parseLoopback accepts exactly 127.0.0.1 or ::1 with a port.
func parseLoopback(addr string) (netip.AddrPort, error) {
	refuse := fault.New(fault.InvalidInput, "operator.non_loopback",
		fmt.Sprintf("the operator dashboard listens only on 127.0.0.1 or [::1], not %q", addr))
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return netip.AddrPort{}, refuse
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Zone() != "" || (ip != netip.MustParseAddr("127.0.0.1") && ip != netip.IPv6Loopback()) {
		return netip.AddrPort{}, refuse
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return netip.AddrPort{}, refuse
	}
	return netip.AddrPortFrom(ip, uint16(p)), nil
}
