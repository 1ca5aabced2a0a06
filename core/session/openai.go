package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"syscall"
)

// openaiAPI is the Chat Completions API (POST BASE/chat/completions,
// stream: true): each event's data is a chat.completion.chunk whose
// choices[0].delta carries content and tool_calls fragments (a call's
// id and name come in its first fragment, its arguments as string pieces
// to concatenate, keyed by index); finish_reason ends the message and
// "data: [DONE]" the stream. With stream_options.include_usage a last
// chunk with no choices carries the usage.
type openaiAPI struct{}

func (openaiAPI) endpoint(base string) string { return base + "/chat/completions" }

func (openaiAPI) headers(h http.Header, key string) {
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

type oaMessage struct {
	Role       string       `json:"role"`
	Content    *string      `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func (openaiAPI) body(s *Session, msgs []Message) ([]byte, error) {
	var out []oaMessage
	if s.rec.System != "" {
		sys := s.rec.System
		out = append(out, oaMessage{Role: "system", Content: &sys})
	}
	for _, m := range msgs {
		switch m.Role {
		case "user":
			t := m.Text
			out = append(out, oaMessage{Role: "user", Content: &t})
		case "assistant":
			om := oaMessage{Role: "assistant"}
			if m.Text != "" || len(m.ToolCalls) == 0 {
				t := m.Text
				om.Content = &t
			}
			for _, c := range m.ToolCalls {
				tc := oaToolCall{ID: c.ID, Type: "function"}
				tc.Function.Name, tc.Function.Arguments = c.Name, string(c.Arguments)
				om.ToolCalls = append(om.ToolCalls, tc)
			}
			out = append(out, om)
		case "tool":
			t := m.Content
			out = append(out, oaMessage{Role: "tool", Content: &t, ToolCallID: m.ToolCallID})
		}
	}
	type fn struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	type tool struct {
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	var tools []tool
	for _, sp := range s.tools.Specs() {
		tools = append(tools, tool{"function", fn{sp.Name, sp.Description, sp.InputSchema}})
	}
	req := map[string]any{
		"model":          s.rec.Model,
		"messages":       out,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"max_tokens":     s.opts.MaxTokens,
	}
	if len(tools) > 0 {
		req["tools"] = tools
	}
	return json.Marshal(req)
}

func (openaiAPI) parse(r *sseReader, emit func(Event), turn int) (turnResult, error) {
	var res turnResult
	type partial struct {
		id, name string
		args     []byte
	}
	calls := map[int]*partial{}
	finished := false
	for {
		ev, err := r.next()
		if err != nil {
			if errors.Is(err, io.EOF) && finished {
				// Some servers end after finish_reason without [DONE].
				break
			}
			return res, err
		}
		if ev.Data == "[DONE]" {
			if !finished {
				return res, io.ErrUnexpectedEOF
			}
			break
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string       `json:"content"`
					ToolCalls []oaToolCall `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				PromptTokens     int64 `json:"prompt_tokens"`
				CompletionTokens int64 `json:"completion_tokens"`
			} `json:"usage"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(ev.Data), &chunk); err != nil {
			return res, fmt.Errorf("bad stream chunk: %v (%w)", err, syscall.EPROTO)
		}
		if chunk.Error != nil {
			return res, fmt.Errorf("the model server reported an error mid-stream: %s (%w)", chunk.Error.Message, syscall.EIO)
		}
		if chunk.Usage != nil {
			res.inTokens, res.outTokens = chunk.Usage.PromptTokens, chunk.Usage.CompletionTokens
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		c := chunk.Choices[0]
		if c.Delta.Content != "" {
			res.text += c.Delta.Content
			emit(Event{Type: "text", Text: c.Delta.Content})
		}
		for _, tc := range c.Delta.ToolCalls {
			i := len(calls)
			if tc.Index != nil {
				i = *tc.Index
			}
			p := calls[i]
			if p == nil {
				p = &partial{}
				calls[i] = p
			}
			if tc.ID != "" {
				p.id = tc.ID
			}
			if tc.Function.Name != "" {
				p.name = tc.Function.Name
			}
			p.args = append(p.args, tc.Function.Arguments...)
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			res.stop, finished = *c.FinishReason, true
		}
	}
	idx := make([]int, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		p := calls[i]
		res.calls = append(res.calls, ToolCall{ID: p.id, Name: p.name, Arguments: jsonArgs(p.args)})
	}
	return res, nil
}

// jsonArgs keeps arguments that are a JSON value as they are; anything
// else becomes a JSON string, so the stored history stays valid JSON and
// the tool answers EINVAL ("the input must be a JSON object").
func jsonArgs(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	q, _ := json.Marshal(string(b))
	return q
}
