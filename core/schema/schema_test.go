package schema

import "testing"

func TestNewerThan(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"0.5", "0.4", true},
		{"0.10", "0.4", true},
		{"1.0", "0.4", true},
		{"0.4", "0.4", false},
		{"0.2", "0.4", false},
		{"0.4.1", "0.4", true},
		{"", "0.4", false},
	} {
		if got := newerThan(tc.a, tc.b); got != tc.want {
			t.Errorf("newerThan(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		info  Info
		steps int
		err   bool
	}{
		{Info{AgentFSVersion: "0.4", FormatVersion: FormatVersion}, 0, false},
		{Info{AgentFSVersion: "0.4", FormatVersion: 0}, 1, false},
		{Info{AgentFSVersion: "0.2", FormatVersion: 0}, 2, false},
		{Info{AgentFSVersion: "0.0", FormatVersion: 0}, 3, false},
		{Info{AgentFSVersion: "0.4", FormatVersion: FormatVersion + 1}, 0, true},
		{Info{AgentFSVersion: "0.9", FormatVersion: 0}, 0, true},
	} {
		steps, err := Plan(tc.info)
		if (err != nil) != tc.err || len(steps) != tc.steps {
			t.Errorf("Plan(%+v) = %d steps, err %v; want %d steps, error %v", tc.info, len(steps), err, tc.steps, tc.err)
		}
	}
}
