package sandbox

import (
	"context"
	"fmt"
	"net"
)

// ProfileAgent is the receipt profile of a delegated-agent run
// ([Sandbox.RunAgent]): the task sandbox's boundary plus one network
// channel, to the provider gate.
const ProfileAgent = "agent"

// DefaultGatePort is the port of the gate endpoint inside an agent
// sandbox when [AgentSpec.GatePort] is zero.
const DefaultGatePort = 8080

// AgentSpec describes one delegated-agent run (issue 15 scope 2). It is a
// task [Spec] whose only way out of the sandbox is the gate: the sandbox
// gets a fresh network namespace with loopback up and a single listener,
// 127.0.0.1:GatePort, created inside that namespace by the sandbox's PID 1
// before any command runs and handed to the supervisor, so connections to
// it are accepted outside the sandbox. Nothing else listens in the
// namespace and it has no other interface, route or resolver; Landlock
// admits TCP connect to GatePort only and no bind; seccomp admits TCP
// stream sockets only (no UDP, so no DNS; no MPTCP, raw or packet
// sockets). The caller, never the agent, chooses what serves the
// listener.
type AgentSpec struct {
	Spec
	// GatePort is the gate endpoint's port inside the sandbox, in
	// [1024, 65535]; 0 means [DefaultGatePort]. The agent's base URL is
	// http://127.0.0.1:GatePort.
	GatePort int
	// Gate receives the listener once the sandbox's network is set up,
	// on a goroutine of its own, before the command starts; it typically
	// runs http.Serve(ln, gate). The sandbox closes the listener when the
	// run ends (Gate's Serve then returns). Required.
	Gate func(ln net.Listener)
}

// gateChannel is an admitted AgentSpec's network channel.
type gateChannel struct {
	port  int
	serve func(net.Listener)
}

// RunAgent is [Sandbox.Run] for the agent profile: the same admission,
// qualification, limits, cancellation and receipt (Profile
// [ProfileAgent]), with the gate channel of spec. Errors as for Run;
// fault.InvalidInput reason "sandbox.gate" for a missing Gate or a port
// out of range.
func (s *Sandbox) RunAgent(ctx context.Context, spec AgentSpec) (Receipt, error) {
	j, err := s.admitAgent(spec)
	if err != nil {
		return Receipt{}, s.refuse(err)
	}
	q, err := s.requireQualified(ctx)
	if err != nil {
		return Receipt{}, s.refuse(err)
	}
	j.id = newJobID()
	if err := s.record(admissionEvent(j, q)); err != nil {
		return Receipt{}, err
	}
	rec, err := s.runJob(ctx, j, q.BinaryDigest)
	if err != nil {
		return rec, s.refuse(err)
	}
	return rec, s.record(receiptEvent(rec))
}

// admitAgent validates spec into a job with a gate channel.
func (s *Sandbox) admitAgent(spec AgentSpec) (job, error) {
	port := spec.GatePort
	if port == 0 {
		port = DefaultGatePort
	}
	if port < 1024 || port > 65535 {
		return job{}, invalid("sandbox.gate", fmt.Sprintf("gate port %d is outside [1024, 65535]", port))
	}
	if spec.Gate == nil {
		return job{}, invalid("sandbox.gate", "an agent run needs a gate to serve its only network channel")
	}
	j, err := s.admit(spec.Spec)
	if err != nil {
		return job{}, err
	}
	j.gate = &gateChannel{port: port, serve: spec.Gate}
	return j, nil
}
