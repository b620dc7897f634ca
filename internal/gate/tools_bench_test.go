package gate

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParseBody: parseBody on a Claude Code-sized request (30
// custom tools with schemas, 64 KiB of messages; 100 KB) against the
// Decoder-based reader it replaced (bodyref_test.go), in the same run;
// and the URL-source scan (providerFetch) against its Decoder reference.
func BenchmarkParseBody(b *testing.B) {
	var tools []string
	for i := range 30 {
		tools = append(tools, fmt.Sprintf(`{"name":"Tool%d","description":%q,"input_schema":{"type":"object","properties":{"a":{"type":"string","description":%q}},"required":["a"]}}`,
			i, strings.Repeat("describes the tool ", 40), strings.Repeat("an argument ", 20)))
	}
	req := []byte(`{"model":"m","max_tokens":32000,"tools":[` + strings.Join(tools, ",") + `],"messages":[{"role":"user","content":"` +
		strings.Repeat("x", 64<<10) + `"}]}`)
	for _, r := range []struct {
		name  string
		parse func([]byte) (body, error)
	}{{"decoder", parseBodyRef}, {"scan", parseBody},
		{"fetch-decoder", func(b []byte) (body, error) { _, err := providerFetchRef(Anthropic, b); return body{}, err }},
		{"fetch-scan", func(b []byte) (body, error) { _, err := providerFetch(Anthropic, b); return body{}, err }}} {
		b.Run(r.name, func(b *testing.B) {
			b.SetBytes(int64(len(req)))
			for b.Loop() {
				if _, err := r.parse(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
