package price

import (
	_ "embed"
	"encoding/json"
	"time"
)

// DefaultURL is OpenRouter's public model list (no authentication).
const DefaultURL = "https://openrouter.ai/api/v1/models"

//go:embed snapshot/openrouter-models.json
var snapshot []byte

// Embedded returns the catalog compiled into the binary. Its [Source] has
// Kind "embedded", the snapshot's compile date and a note that it is not
// live. It panics only if the embedded file is broken, which a test rules out.
func Embedded() *Catalog {
	src := Source{Kind: KindEmbedded, URL: DefaultURL}
	var meta struct {
		M struct{ Compiled, Source, Note, Unpriced string } `json:"_coagent8"`
	}
	if err := json.Unmarshal(snapshot, &meta); err == nil {
		src.Date, _ = time.Parse(time.DateOnly, meta.M.Compiled)
		src.Note, src.Unpriced = meta.M.Note, meta.M.Unpriced
	}
	c, err := Parse(snapshot, src)
	if err != nil {
		panic("price: embedded snapshot: " + err.Error())
	}
	return c
}
