package lockservice

import (
	"strings"
	"testing"
)

func TestOwnerRuleIsTheServices(t *testing.T) {
	for _, ok := range []string{"billing-worker-3", "host-7:pid 4121", "été", "a\u2028b", "日本"} {
		if err := validOwner(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"tab\there", "nl\n", "\u200b", "\ue000", "\U000e0001", strings.Repeat("a", 201)} {
		if err := validOwner(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
