//go:build linux && amd64

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockErrataScopes is Landlock erratum 2 (scoped signal/abstract-socket
// fix); without it ABI 6 scopes are unreliable and the ABI counts as 5
// (notes/sandbox.md §4).
const landlockErrataScopes = 0x2

// hostFacts are the kernel facts a run depends on.
type hostFacts struct {
	release string
	abi     int // effective ABI (errata applied)
	errata  int
}

func readHost() (hostFacts, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return hostFacts{}, unavailable("kernel", "uname", err)
	}
	h := hostFacts{release: unix.ByteSliceToString(u.Release[:])}
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		return h, nil // abi 0: refused by checkLandlock
	}
	h.errata, _ = ll.LandlockGetErrata()
	h.abi = abi
	if abi >= 6 && h.errata&landlockErrataScopes == 0 {
		h.abi = 5
	}
	return h, nil
}

// checkHost fails closed, naming the first missing capability.
func (s *Sandbox) checkHost(h hostFacts) error {
	if h.abi < s.cfg.MinLandlockABI {
		return unavailable("landlock", fmt.Sprintf("Landlock ABI %d (host has %d)", s.cfg.MinLandlockABI, h.abi), nil)
	}
	b, err := os.ReadFile("/proc/sys/user/max_user_namespaces")
	if err != nil || strings.TrimSpace(string(b)) == "0" {
		return unavailable("userns", "user namespaces (user.max_user_namespaces is 0)", err)
	}
	return checkUnprivilegedUserns(procRoot(), os.Geteuid())
}

// kernelFacts renders h for a receipt.
func (h hostFacts) kernel(cg string) Kernel {
	return Kernel{Release: h.release, Arch: "amd64", LandlockABI: h.abi, LandlockErrata: h.errata,
		Namespaces: []string{"user", "mnt", "pid", "net", "ipc", "uts", "cgroup"}, Cgroup: cg}
}

// binaryKey identifies the running executable file without reading it.
func binaryKey() (string, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err != nil {
		return "", unavailable("binary", "a readable /proc/self/exe", err)
	}
	return fmt.Sprintf("%d:%d:%d:%d.%d:%d.%d", st.Dev, st.Ino, st.Size,
		st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec), nil
}

// binaryDigest hashes the running executable (sha256, hex).
func binaryDigest() (string, error) {
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return "", unavailable("binary", "a readable /proc/self/exe", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", unavailable("binary", "a readable /proc/self/exe", err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func currentIdentity() (identity, error) {
	h, err := readHost()
	if err != nil {
		return identity{}, err
	}
	key, err := binaryKey()
	if err != nil {
		return identity{}, err
	}
	return identity{binaryKey: key, kernel: h.release, abi: h.abi, policy: policyDigest()}, nil
}

// signalName returns "SIGKILL" etc.
func signalName(sig syscall.Signal) string {
	n := unix.SignalName(sig)
	if n == "" {
		return "SIG" + strconv.Itoa(int(sig))
	}
	return n
}

// hostReady checks every capability a run needs without starting one.
func (s *Sandbox) hostReady() error {
	h, err := readHost()
	if err != nil {
		return err
	}
	if err := s.checkHost(h); err != nil {
		return err
	}
	_, err = detectCgroups(s.cfg.CgroupRoot)
	return err
}
