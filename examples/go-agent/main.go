// Command go-agent is an agent loop in Go: a model behind an
// OpenAI-compatible chat completions endpoint decides, the AgentFS tools
// (sdk-go/agenttools) act on the agent's database, every call lands in its
// tool-call log.
//
//	go run . -fake                       # the scripted model on 127.0.0.1, no network
//	OPENAI_API_KEY=... go run . -model gpt-5-mini
//	go run . -base-url http://127.0.0.1:11434/v1 -model qwen3   # any OpenAI-compatible server
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"

	"github.com/agentfs-go/agentfs/examples/go-agent/fakemodel"
	agentfs "github.com/agentfs-go/agentfs/sdk-go"
	"github.com/agentfs-go/agentfs/sdk-go/agenttools"
)

// The chat completions wire format, as much of it as the loop uses.
type message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// Config is one run of the loop.
type Config struct {
	BaseURL, APIKey, Model string
	Task                   string
	MaxSteps               int
}

// Run drives the model until it answers without a tool call (or MaxSteps)
// and returns the answer.
func Run(ctx context.Context, agent *agentfs.AgentFS, cfg Config) (string, error) {
	tools := agenttools.New(agent, agenttools.Options{})
	var offered []tool
	for _, s := range tools.Specs() {
		var t tool
		t.Type = "function"
		t.Function.Name, t.Function.Description, t.Function.Parameters = s.Name, s.Description, s.InputSchema
		offered = append(offered, t)
	}
	msgs := []message{
		{Role: "system", Content: "You are an agent with a filesystem, a shell sandbox and a key-value store. Use the tools."},
		{Role: "user", Content: cfg.Task},
	}
	for step := 0; step < cfg.MaxSteps; step++ {
		reply, err := complete(ctx, cfg, msgs, offered)
		if err != nil {
			return "", err
		}
		msgs = append(msgs, reply)
		if len(reply.ToolCalls) == 0 {
			return reply.Content, nil
		}
		for _, c := range reply.ToolCalls {
			// The tool records the call; the model reads the result, or
			// the error (EINVAL: ...) so it can correct itself.
			res, err := tools.Call(ctx, c.Function.Name, json.RawMessage(c.Function.Arguments))
			content := ""
			if err != nil {
				content = "error: " + err.Error()
			} else {
				b, _ := json.Marshal(res)
				content = string(b)
			}
			fmt.Printf("  %s %s -> %.100s\n", c.Function.Name, c.Function.Arguments, content)
			msgs = append(msgs, message{Role: "tool", ToolCallID: c.ID, Content: content})
		}
	}
	return "", fmt.Errorf("no answer after %d steps", cfg.MaxSteps)
}

func complete(ctx context.Context, cfg Config, msgs []message, tools []tool) (message, error) {
	body, _ := json.Marshal(map[string]any{"model": cfg.Model, "messages": msgs, "tools": tools})
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimSuffix(cfg.BaseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return message{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return message{}, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return message{}, fmt.Errorf("model endpoint: %s: %s", resp.Status, data)
	}
	var out struct {
		Choices []struct {
			Message message `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &out); err != nil || len(out.Choices) == 0 {
		return message{}, fmt.Errorf("model endpoint: unexpected response %.200s", data)
	}
	return out.Choices[0].Message, nil
}

func main() {
	db := flag.String("db", ".agentfs/go-agent.db", "the agent's database")
	baseURL := flag.String("base-url", envOr("OPENAI_BASE_URL", "https://api.openai.com/v1"), "OpenAI-compatible endpoint")
	model := flag.String("model", "gpt-5-mini", "model name")
	fake := flag.Bool("fake", false, "play the model with the scripted server on 127.0.0.1 (no network)")
	task := flag.String("task", "Find the TODOs in /src and write them to /TODO.md.", "what the agent should do")
	flag.Parse()

	ctx := context.Background()
	agent, err := agentfs.Open(ctx, agentfs.Options{Path: *db})
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	if err := Seed(ctx, agent); err != nil {
		log.Fatal(err)
	}
	if *fake {
		srv, err := fakemodel.Start()
		if err != nil {
			log.Fatal(err)
		}
		defer srv.Close()
		*baseURL = srv.URL
	}
	answer, err := Run(ctx, agent, Config{BaseURL: *baseURL, APIKey: os.Getenv("OPENAI_API_KEY"), Model: *model, Task: *task, MaxSteps: 20})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("answer:", answer)
	fmt.Printf("see every step: agentfs timeline %s\n", *db)
}

// Seed gives the agent a small code base with TODOs.
func Seed(ctx context.Context, agent *agentfs.AgentFS) error {
	files := map[string]string{
		"/src/server.go": "package main\n\n// TODO: read the port from the environment\nconst port = 8080\n",
		"/src/db.go":     "package main\n\nfunc open() {\n\t// TODO: retry when the database is busy\n}\n",
		"/src/README.md": "# demo\n",
	}
	for p, c := range files {
		if err := agent.FS().WriteFile(ctx, p, []byte(c), agentfs.WriteOptions{CreateParents: true}); err != nil {
			return err
		}
	}
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
