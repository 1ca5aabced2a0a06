package cmd

import (
	"encoding/json"
	"testing"
)

func TestKV(t *testing.T) {
	newAgent(t)
	mustRun(t, "kv", "t", "set", "user:1", `{"name": "Ada", "langs": ["en", "fr"]}`)
	mustRun(t, "kv", "t", "set", "user:2", `{"name":"Bob"}`)
	mustRun(t, "kv", "t", "set", "step", "3")
	mustRun(t, "kv", "t", "set", "done", "true")
	mustRun(t, "kv", "t", "set", "note", "hello world") // not JSON: a string
	mustRun(t, "kv", "t", "set", "--string", "code", "42")
	mustRun(t, "kv", "t", "set", "quoted", `"already a string"`)
	mustRun(t, "kv", "t", "set", "neg", "-1") // a value, not a flag

	for key, want := range map[string]string{
		"user:1": `{"name":"Ada","langs":["en","fr"]}`,
		"step":   "3",
		"done":   "true",
		"note":   `"hello world"`,
		"code":   `"42"`,
		"quoted": `"already a string"`,
		"neg":    "-1",
	} {
		checkOut(t, "kv get "+key, mustRun(t, "kv", "t", "get", key), want+"\n")
	}

	checkOut(t, "kv ls", mustRun(t, "kv", "t", "ls"), lines(
		"code\t\"42\"",
		"done\ttrue",
		"neg\t-1",
		"note\t\"hello world\"",
		"quoted\t\"already a string\"",
		"step\t3",
		"user:1\t{\"name\":\"Ada\",\"langs\":[\"en\",\"fr\"]}",
		"user:2\t{\"name\":\"Bob\"}",
	))
	checkOut(t, "kv ls --prefix user:", mustRun(t, "kv", "t", "ls", "--prefix", "user:"), lines(
		"user:1\t{\"name\":\"Ada\",\"langs\":[\"en\",\"fr\"]}",
		"user:2\t{\"name\":\"Bob\"}",
	))

	var entries []struct {
		Key       string          `json:"key"`
		Value     json.RawMessage `json:"value"`
		CreatedAt int64           `json:"created_at"`
		UpdatedAt int64           `json:"updated_at"`
	}
	out := mustRun(t, "kv", "t", "ls", "--prefix", "user:", "--json")
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatalf("kv ls --json is not JSON: %v\n%s", err, out)
	}
	if len(entries) != 2 || entries[0].Key != "user:1" || entries[1].Key != "user:2" || entries[0].CreatedAt == 0 {
		t.Fatalf("kv ls --json = %+v", entries)
	}
	var v struct{ Name string }
	if err := json.Unmarshal(entries[1].Value, &v); err != nil || v.Name != "Bob" {
		t.Errorf("value of user:2 = %s (%v)", entries[1].Value, err)
	}
	checkOut(t, "kv ls --json of nothing", mustRun(t, "kv", "t", "ls", "--prefix", "zzz", "--json"), "[]\n")

	mustRun(t, "kv", "t", "rm", "user:1", "step")
	checkOut(t, "kv ls after rm", mustRun(t, "kv", "t", "ls", "--prefix", "user:"), lines("user:2\t{\"name\":\"Bob\"}"))
	wantFail(t, 1, []string{"kv", "t", "get", "user:1"}, `key not found: "user:1"`, "Try: list keys with: agentfs kv t ls")
	wantFail(t, 1, []string{"kv", "t", "rm", "step"}, "key not found")
	mustRun(t, "kv", "t", "rm", "-f", "step")

	wantFail(t, 2, []string{"kv", "t", "set", "k"}, "accepts 2 arg(s)")
	wantFail(t, 2, []string{"kv", "t", "ls", "--bogus"}, "unknown flag: --bogus")
	wantFail(t, 1, []string{"kv", "t", "set", "", "1"}, "empty key")
}
