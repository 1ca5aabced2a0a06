package core

import (
	"regexp"
	"strings"
	"testing"
)

// The hand-written checks of agent ids and snapshot names accept exactly
// what the regular expressions they replaced accepted.
func TestNameChecksMatchTheirPatterns(t *testing.T) {
	id := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	snap := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	inputs := []string{"", "a", "A9", "_x", "-", ".", ".a", "a.b", "a b", "a\n", "a/b", "é", "a\x00", "Z-_.9",
		strings.Repeat("a", 127), strings.Repeat("a", 128), strings.Repeat("a", 129), "a" + strings.Repeat(".", 127)}
	for c := 0; c < 256; c++ {
		inputs = append(inputs, string([]byte{byte(c)}), "a"+string([]byte{byte(c)}))
	}
	for _, s := range inputs {
		if got, want := idChars(s), id.MatchString(s); got != want {
			t.Errorf("idChars(%q) = %v, the pattern says %v", s, got, want)
		}
		if got, want := validSnapshotName(s), snap.MatchString(s); got != want {
			t.Errorf("validSnapshotName(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
