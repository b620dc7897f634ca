package policy

import "math/big"

// decidePrice applies the price rules to a model no list covers.
func decidePrice(r Rules, cat Catalog, in Input, d Decision) Decision {
	// Without any price data every unlisted model is asked, the default
	// included, and the approval may be remembered.
	if cat == nil || cat.Len() == 0 {
		d.Remember = true
		return d.with(Ask, "", ReasonNoPriceData)
	}
	q := quote(cat, in.Backend, d.Model)
	d.Price, d.PriceMatch, d.PriceID = q.PerMillion, q.Match, q.ID
	switch q.Match {
	case MatchNone:
		d.Remember = true
		return d.with(Ask, "", ReasonUnpriced)
	case MatchApprox:
		d.Remember = true
		return d.with(Ask, "", ReasonApproximate)
	}
	if r.askAbove == nil || q.PerMillion.Cmp(r.askAbove) >= 0 {
		return d.with(Ask, "governance.askAbovePrice", ReasonAboveLimit)
	}
	// The multiplier compares a model with its backend's default; the
	// default itself is bound only by askAbovePrice, otherwise a
	// multiplier ≤ 1 would ask for the default on every turn.
	if d.IsDefault {
		return d.with(Allow, "", ReasonBelowLimits)
	}
	return decideMultiplier(r, cat, in, d)
}

// decideMultiplier applies priceMultiplier × the default's exact price. An
// unknown, approximate or unresolved default price cannot meet the limit
// and that ask is not rememberable: the uncertainty is not about
// this model's price.
func decideMultiplier(r Rules, cat Catalog, in Input, d Decision) Decision {
	if in.Default == "" || !ValidID(in.Default) {
		return d.with(Ask, "governance.priceMultiplier", ReasonDefaultUnpriced)
	}
	dq := quote(cat, in.Backend, in.Default)
	if dq.Match != MatchExact || r.multiplier == nil {
		return d.with(Ask, "governance.priceMultiplier", ReasonDefaultUnpriced)
	}
	limit := new(big.Rat).Mul(r.multiplier, dq.PerMillion)
	if d.Price.Cmp(limit) >= 0 {
		return d.with(Ask, "governance.priceMultiplier", ReasonAboveMultiplier)
	}
	return d.with(Allow, "", ReasonBelowLimits)
}

// quote looks model up, falling back to the id without an effort suffix:
// a price for X also covers X-high (governance-and-consent.md §5). The
// suffix is stripped only when the full id is not in the catalog, since
// some real names end in "-high".
func quote(cat Catalog, backend, model string) Quote {
	q := cat.Quote(backend, model)
	if q.Match != MatchNone && q.PerMillion != nil && q.PerMillion.Sign() >= 0 {
		return q
	}
	if base, ok := stripEffort(model); ok {
		if bq := cat.Quote(backend, base); bq.Match != MatchNone && bq.PerMillion != nil && bq.PerMillion.Sign() >= 0 {
			return bq
		}
	}
	return Quote{}
}
