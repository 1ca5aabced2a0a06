// Package fakemodel plays an OpenAI-compatible chat completions endpoint
// on 127.0.0.1 with a scripted model: it reads the conversation it is sent
// (the task, the tool results) and answers with the tool call a model
// would make next, so the agent loop, the HTTP exchange and the tools run
// for real without a network model.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Server is the running endpoint; URL is its base URL (".../v1").
type Server struct {
	URL string
	srv *http.Server

	mu sync.Mutex
	// Tools holds the tool names offered in each request, for tests.
	Tools [][]string
}

// Start listens on a free loopback port.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/v1"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.complete)
	s.srv = &http.Server{Handler: mux}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

type msg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []msg `json:"messages"`
		Tools    []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Function.Name)
	}
	s.mu.Lock()
	s.Tools = append(s.Tools, names)
	s.mu.Unlock()

	var results []string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			results = append(results, m.Content)
		}
	}
	reply := next(results)
	reply["role"] = "assistant"
	finish := "stop"
	if reply["tool_calls"] != nil {
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", len(results)), "object": "chat.completion", "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "message": reply, "finish_reason": finish}},
	})
}

func call(step int, name string, args any) map[string]any {
	b, _ := json.Marshal(args)
	return map[string]any{"content": nil, "tool_calls": []any{map[string]any{
		"id": fmt.Sprintf("call_%d", step), "type": "function",
		"function": map[string]any{"name": name, "arguments": string(b)},
	}}}
}

// next is the script: one step per tool result seen so far.
func next(results []string) map[string]any {
	switch len(results) {
	case 0:
		return call(0, "search", map[string]any{"pattern": "TODO", "path": "/src"})
	case 1:
		var found struct {
			Matches []struct {
				Path string `json:"path"`
				Line int    `json:"line"`
				Text string `json:"text"`
			} `json:"matches"`
		}
		if err := json.Unmarshal([]byte(results[0]), &found); err != nil || len(found.Matches) == 0 {
			return map[string]any{"content": "I found no TODOs."}
		}
		var b strings.Builder
		b.WriteString("# TODO\n\n")
		for _, m := range found.Matches {
			text := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(m.Text), "// TODO:"))
			fmt.Fprintf(&b, "- [ ] %s (%s:%d)\n", text, m.Path, m.Line)
		}
		return call(1, "write_file", map[string]any{"path": "/TODO.md", "content": b.String()})
	case 2:
		return call(2, "bash", map[string]any{"command": "grep -c '^- \\[ \\]' /TODO.md"})
	case 3:
		return call(3, "kv_set", map[string]any{"key": "todo:count", "value": json.RawMessage(strings.TrimSpace(extract(results[2])))})
	}
	return map[string]any{"content": "Wrote /TODO.md with the TODOs of /src."}
}

// extract is the stdout of a bash result.
func extract(result string) string {
	var r struct {
		Stdout string `json:"stdout"`
	}
	json.Unmarshal([]byte(result), &r)
	return r.Stdout
}
