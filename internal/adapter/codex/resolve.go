package codex

import (
	"context"

	"github.com/coagent8/coagent8/internal/adapter"
)

var _ adapter.Resolver = (*Backend)(nil)

// Resolve reports the concrete model a turn would run, by metadata only
// (seed 000 §2). A named model is Codex's id as given — the thread start
// of the real turn reports the model and [adapter.Turn.CheckModel]
// refuses any other. With no model, an ephemeral thread is started and
// verified without a turn ([Backend.Inspect]) and its reported model is
// the default that consent must name.
func (b *Backend) Resolve(ctx context.Context, workspace, model string) (adapter.Resolution, error) {
	if model != "" {
		return adapter.Resolution{Model: model}, nil
	}
	in, err := b.Inspect(ctx, workspace)
	if err != nil {
		return adapter.Resolution{}, err
	}
	if in.Error != nil {
		return adapter.Resolution{}, in.Error
	}
	return adapter.Resolution{Model: in.DefaultModel, Verified: in.Verified}, nil
}
