package config

import (
	"fmt"
	"math"

	"github.com/coagent8/coagent8/internal/fault"
)

// Budget input ranges (issue 19 item 2). Every USD, request and minute
// count a caller types (terminal flag or MCP argument) is checked
// against them before anything is opened, so an absurd value (1e308,
// NaN, Inf, negative) is named as bad input instead of saturating
// somewhere downstream.
const (
	// MaxBudgetUSD bounds a spend budget in US dollars, as delegate.maxUSD.
	MaxBudgetUSD = 10_000.0
	// MaxBudgetRequests bounds a request budget.
	MaxBudgetRequests = 10_000
	// MaxBudgetMinutes bounds a wall-clock budget (one day), as
	// delegate.maxMinutes.
	MaxBudgetMinutes = 1440
)

// ReasonBudgetRange is the reason of an out-of-range budget input.
const ReasonBudgetRange = "budget.out_of_range"

// CheckBudgetUSD returns nil if v is a finite number of US dollars in
// (0, [MaxBudgetUSD]], else an INVALID_INPUT [fault.Error] with reason
// [ReasonBudgetRange] naming field (the flag or argument as the caller
// spelled it).
func CheckBudgetUSD(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || !(v > 0) || v > MaxBudgetUSD {
		return rangeErr(field, fmt.Sprintf("must be a number of US dollars above 0 and at most %g (got %g)", MaxBudgetUSD, v))
	}
	return nil
}

// CheckBudgetCount returns nil if v is in [lo, hi], else an INVALID_INPUT
// [fault.Error] with reason [ReasonBudgetRange] naming field. lo is 0
// where 0 means "the default".
func CheckBudgetCount(field string, v, lo, hi int64) error {
	if v < lo || v > hi {
		return rangeErr(field, fmt.Sprintf("must be a whole number from %d to %d (got %d)", lo, hi, v))
	}
	return nil
}

func rangeErr(field, msg string) error {
	return fault.New(fault.InvalidInput, ReasonBudgetRange, field+" "+msg).With("field", field)
}
