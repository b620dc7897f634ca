package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDelegateSection: the ceilings and defaults of delegate jobs, and
// every malformed value refused with the key named.
func TestDelegateSection(t *testing.T) {
	for _, tc := range []struct {
		body    string
		want    Delegate
		wantKey string
	}{
		{`{"schemaVersion":1}`, Delegate{MaxUSD: DefaultDelegateMaxUSD, MaxMinutes: DefaultDelegateMaxMinutes}, ""},
		{`{"delegate":{"maxUSD":1.5,"maxMinutes":10,"allowWithoutAsking":["m-1"]}}`, Delegate{MaxUSD: 1.5, MaxMinutes: 10, AllowWithoutAsking: []string{"m-1"}}, ""},
		{`{"delegate":{"maxUSD":0}}`, defaultDelegate(), "delegate.maxUSD"},
		{`{"delegate":{"maxUSD":"2"}}`, defaultDelegate(), "delegate.maxUSD"},
		{`{"delegate":{"maxMinutes":1.5}}`, defaultDelegate(), "delegate.maxMinutes"},
		{`{"delegate":{"maxMinutes":0}}`, defaultDelegate(), "delegate.maxMinutes"},
		{`{"delegate":{"allowWithoutAsking":[""]}}`, defaultDelegate(), "delegate.allowWithoutAsking"},
		{`{"delegate":{"approve":true}}`, defaultDelegate(), "delegate.approve"},
		{`{"delegate":[]}`, defaultDelegate(), "delegate"},
	} {
		f, _ := LoadFile(writeConfig(t, tc.body))
		if d := cmp.Diff(tc.want, f.Delegate); d != "" {
			t.Errorf("%s: Delegate (-want +got):\n%s", tc.body, d)
		}
		got := ""
		if ke, ok := f.DelegateErr().(*KeyError); ok {
			got = ke.Key
		}
		if got != tc.wantKey {
			t.Errorf("%s: DelegateErr key %q (%v), want %q", tc.body, got, f.DelegateErr(), tc.wantKey)
		}
	}
}
