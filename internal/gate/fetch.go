package gate

import (
	"encoding/json"
	"errors"
	"strings"
)

// Provider fetches. A content block can name its content by URL instead
// of carrying it: Anthropic image and document blocks with a "url"
// source, OpenAI input_image "image_url" and input_file "file_url". The
// provider then fetches that URL itself, from wherever the block sits (a
// message, a tool result, an OpenAI prompt variable or function output),
// and the URL is whatever the agent wrote: a party no egress decision
// named, workspace content in its path or query (red team 2026-12-03).
// Like a hosted tool it is refused (request.provider_fetch); inline
// content (base64, text, data: URLs, file ids) is admitted.
//
// The whole body is read, every member and every copy of a repeated key,
// so no placement, escape or duplicate hides a URL the provider reads.
// Keys are matched exactly, as the providers read them.

// maxFetchDepth bounds the nesting the scan follows (encoding/json's own
// limit): a deeper body is refused, never half read.
const maxFetchDepth = 10000

// providerFetch returns what in body b provider p would fetch from a URL
// itself ("source" for an Anthropic url source, "image_url" or
// "file_url" for OpenAI), or "" when all content is inline. b is valid
// JSON (parseBody checked it); the walk is one pass over it on the
// body's cursor, every string skipped unread unless it is a value the
// providers fetch by (a Decoder token walk cost about 1 ms per 100 KB).
func providerFetch(p Provider, b []byte) (string, error) {
	s := fetchScan{p: p, c: cursor{b: b}}
	s.c.ws()
	return s.value("", "", 0)
}

type fetchScan struct {
	p Provider
	c cursor
}

var errFetchScan = errors.New("request body could not be read for URL sources")

// value reads the value at the cursor — the member key of the object
// whose member parent is, or an element ("") of parent's array — and
// reports the first URL fetch in it.
func (s *fetchScan) value(key, parent string, depth int) (string, error) {
	c := &s.c
	if depth > maxFetchDepth || c.i >= len(c.b) {
		return "", errFetchScan
	}
	switch c.b[c.i] {
	case '{', '[':
		return s.container(key, depth)
	case '"':
		raw, ok := c.str()
		if !ok {
			return "", errFetchScan
		}
		if !s.fetched(key, parent) {
			return "", nil
		}
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", errFetchScan
		}
		return s.check(key, parent, v), nil
	}
	if _, ok := c.value(); !ok { // a number, true, false or null
		return "", errFetchScan
	}
	return "", nil
}

// container reads the object or array at the cursor, the value of key.
func (s *fetchScan) container(key string, depth int) (string, error) {
	c := &s.c
	obj := c.b[c.i] == '{'
	end := byte(']')
	if obj {
		end = '}'
	}
	c.i++
	for n := 0; ; n++ {
		more, ok := c.next(n, end)
		if !ok {
			return "", errFetchScan
		}
		if !more {
			return "", nil
		}
		k := ""
		if obj {
			var err error
			if k, err = c.name(); err != nil {
				return "", errFetchScan
			}
		}
		if what, err := s.value(k, key, depth+1); what != "" || err != nil {
			return what, err
		}
	}
}

// fetched reports whether a string that is the value of key (in parent)
// is one a provider fetches by, so it has to be read.
func (s *fetchScan) fetched(key, parent string) bool {
	switch s.p {
	case Anthropic:
		return parent == "source" && key == "type"
	case OpenAI:
		return fetchKey(key) || fetchKey(parent) && key == "url"
	}
	return false
}

// check is what v, the value of key in parent, makes the provider fetch.
func (s *fetchScan) check(key, parent, v string) string {
	switch s.p {
	case Anthropic:
		if v == "url" {
			return "source"
		}
	case OpenAI:
		// A string image_url/file_url, or the url of an image_url object
		// (the Chat Completions form): only a data: URL is inline.
		if strings.HasPrefix(v, "data:") {
			return ""
		}
		if fetchKey(key) {
			return key
		}
		return parent
	}
	return ""
}

func fetchKey(k string) bool { return k == "image_url" || k == "file_url" }

// reachesBeyond refuses a body, read as req, that would make provider p
// reach a party the egress decision does not name: a hosted tool
// (request.hosted_tool) or content by URL (request.provider_fetch); a
// body the URL scan cannot read is refused request.body (fail closed).
// bind applies it to the client's body and sized to a filtered one.
func reachesBeyond(p Provider, req body, b []byte) (reason, detail string) {
	if t := req.hostedTool(p); t != "" {
		return ReasonHostedTool, hostedToolDetail(p, t)
	}
	switch what, err := providerFetch(p, b); {
	case err != nil:
		return ReasonBody, err.Error()
	case what != "":
		return ReasonProviderFetch, providerFetchDetail(what)
	}
	return "", ""
}

// providerFetchDetail is the refusal's detail for what: the URL itself
// is not echoed (it may carry the content it exfiltrates).
func providerFetchDetail(what string) string {
	return "the provider would fetch a content block's " + what + " from a URL itself, beyond the gate: only inline content (base64, data: URLs, file ids) is admitted"
}
