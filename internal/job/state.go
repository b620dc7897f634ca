package job

import "fmt"

// State is a job's lifecycle state.
type State uint8

// The states of a job.
const (
	Running State = iota + 1
	Succeeded
	Failed
	Cancelled
	Tainted
	Rejected
	Expired
	Admitted
)

var stateNames = [...]string{"", "running", "succeeded", "failed", "cancelled", "tainted", "rejected", "expired", "admitted"}

// String returns the state's name; it panics on an unknown value.
func (s State) String() string {
	if s == 0 || int(s) >= len(stateNames) {
		panic(fmt.Sprintf("job: unknown State %d", uint8(s)))
	}
	return stateNames[s]
}

// MarshalText encodes the state by name.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ParseState returns the state named s.
func ParseState(s string) (State, error) {
	for i, n := range stateNames {
		if i > 0 && n == s {
			return State(i), nil
		}
	}
	return 0, fmt.Errorf("job: unknown state %q", s)
}
