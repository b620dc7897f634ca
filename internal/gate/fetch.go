package gate

import (
	"bytes"
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
// "file_url" for OpenAI), or "" when all content is inline.
func providerFetch(p Provider, b []byte) (string, error) {
	s := fetchScan{p: p, dec: json.NewDecoder(bytes.NewReader(b))}
	return s.value("", "", 0)
}

type fetchScan struct {
	p   Provider
	dec *json.Decoder
}

var errFetchScan = errors.New("request body could not be read for URL sources")

// value reads one JSON value, the member key of the object whose member
// parent is, and reports the first URL fetch in it.
func (s *fetchScan) value(key, parent string, depth int) (string, error) {
	if depth > maxFetchDepth {
		return "", errFetchScan
	}
	t, err := s.dec.Token()
	if err != nil {
		return "", errFetchScan
	}
	switch t {
	case json.Delim('{'), json.Delim('['):
		for s.dec.More() {
			k := ""
			if t == json.Delim('{') {
				kt, err := s.dec.Token()
				var ok bool
				if k, ok = kt.(string); err != nil || !ok {
					return "", errFetchScan
				}
			}
			if what, err := s.value(k, key, depth+1); what != "" || err != nil {
				return what, err
			}
		}
		if _, err := s.dec.Token(); err != nil { // the closing delimiter
			return "", errFetchScan
		}
		return "", nil
	}
	v, ok := t.(string)
	if !ok {
		return "", nil
	}
	switch s.p {
	case Anthropic:
		if parent == "source" && key == "type" && v == "url" {
			return "source", nil
		}
	case OpenAI:
		// A string image_url/file_url, or the url of an image_url object
		// (the Chat Completions form): only a data: URL is inline.
		if fetchKey(key) && !strings.HasPrefix(v, "data:") {
			return key, nil
		}
		if fetchKey(parent) && key == "url" && !strings.HasPrefix(v, "data:") {
			return parent, nil
		}
	}
	return "", nil
}

func fetchKey(k string) bool { return k == "image_url" || k == "file_url" }

// providerFetchDetail is the refusal's detail for what: the URL itself
// is not echoed (it may carry the content it exfiltrates).
func providerFetchDetail(what string) string {
	return "the provider would fetch a content block's " + what + " from a URL itself, beyond the gate: only inline content (base64, data: URLs, file ids) is admitted"
}
