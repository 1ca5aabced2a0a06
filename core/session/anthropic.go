package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
)

// anthropicAPI is the Messages API (POST BASE/v1/messages, stream:
// true): message_start (usage.input_tokens), then per content block
// content_block_start (a text block, or a tool_use block with id and
// name), content_block_delta (text_delta text, or input_json_delta
// partial_json to concatenate), content_block_stop; then message_delta
// (stop_reason, usage.output_tokens) and message_stop. ping events are
// keep-alives; an error event ends the stream with a failure.
type anthropicAPI struct{}

// anthropicVersion is the API version header the requests carry.
const anthropicVersion = "2023-06-01"

func (anthropicAPI) endpoint(base string) string { return base + "/v1/messages" }

func (anthropicAPI) headers(h http.Header, key string) {
	if key != "" {
		h.Set("x-api-key", key)
	}
	h.Set("anthropic-version", anthropicVersion)
}

type anBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

func (anthropicAPI) body(s *Session, msgs []Message) ([]byte, error) {
	var out []anMessage
	// add appends blocks to the last message when it has the same role:
	// tool results and the next prompt travel in one user message, as the
	// API wants roles to alternate.
	add := func(role string, b ...anBlock) {
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, b...)
			return
		}
		out = append(out, anMessage{Role: role, Content: b})
	}
	for _, m := range msgs {
		switch m.Role {
		case "user":
			t := m.Text
			add("user", anBlock{Type: "text", Text: &t})
		case "assistant":
			var blocks []anBlock
			if m.Text != "" {
				t := m.Text
				blocks = append(blocks, anBlock{Type: "text", Text: &t})
			}
			for _, c := range m.ToolCalls {
				in := c.Arguments
				if len(in) == 0 || in[0] != '{' {
					// tool_use input must be an object; the tool saw the
					// same bad arguments and answered EINVAL.
					in = json.RawMessage("{}")
				}
				blocks = append(blocks, anBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: in})
			}
			if len(blocks) == 0 {
				empty := ""
				blocks = append(blocks, anBlock{Type: "text", Text: &empty})
			}
			add("assistant", blocks...)
		case "tool":
			c := m.Content
			add("user", anBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: &c, IsError: m.IsError})
		}
	}
	type tool struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	var tools []tool
	for _, sp := range s.tools.Specs() {
		tools = append(tools, tool{sp.Name, sp.Description, sp.InputSchema})
	}
	req := map[string]any{
		"model":      s.rec.Model,
		"messages":   out,
		"stream":     true,
		"max_tokens": s.opts.MaxTokens,
	}
	if s.rec.System != "" {
		req["system"] = s.rec.System
	}
	if len(tools) > 0 {
		req["tools"] = tools
	}
	return json.Marshal(req)
}

func (anthropicAPI) parse(r *sseReader, emit func(Event), turn int) (turnResult, error) {
	var res turnResult
	type block struct {
		typ, id, name string
		args          []byte
	}
	blocks := map[int]*block{}
	var order []int
	started := false
	for {
		ev, err := r.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return res, io.ErrUnexpectedEOF
			}
			return res, err
		}
		var e struct {
			Type    string `json:"type"`
			Index   int    `json:"index"`
			Message struct {
				Usage struct {
					InputTokens int64 `json:"input_tokens"`
				} `json:"usage"`
			} `json:"message"`
			ContentBlock struct {
				Type string `json:"type"`
				ID   string `json:"id"`
				Name string `json:"name"`
				Text string `json:"text"`
			} `json:"content_block"`
			Delta struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage struct {
				OutputTokens int64 `json:"output_tokens"`
			} `json:"usage"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			return res, fmt.Errorf("bad stream event %q: %v (%w)", ev.Event, err, syscall.EPROTO)
		}
		typ := e.Type
		if typ == "" {
			typ = ev.Event
		}
		switch typ {
		case "message_start":
			started = true
			res.inTokens = e.Message.Usage.InputTokens
		case "content_block_start":
			b := &block{typ: e.ContentBlock.Type, id: e.ContentBlock.ID, name: e.ContentBlock.Name}
			blocks[e.Index] = b
			order = append(order, e.Index)
			if b.typ == "text" && e.ContentBlock.Text != "" {
				res.text += e.ContentBlock.Text
				emit(Event{Type: "text", Text: e.ContentBlock.Text})
			}
		case "content_block_delta":
			b := blocks[e.Index]
			if b == nil {
				return res, fmt.Errorf("content_block_delta for block %d that did not start (%w)", e.Index, syscall.EPROTO)
			}
			switch e.Delta.Type {
			case "text_delta":
				res.text += e.Delta.Text
				emit(Event{Type: "text", Text: e.Delta.Text})
			case "input_json_delta":
				b.args = append(b.args, e.Delta.PartialJSON...)
			}
		case "content_block_stop":
		case "message_delta":
			if e.Delta.StopReason != "" {
				res.stop = e.Delta.StopReason
			}
			if e.Usage.OutputTokens > 0 {
				res.outTokens = e.Usage.OutputTokens
			}
		case "message_stop":
			if !started {
				return res, fmt.Errorf("message_stop before message_start (%w)", syscall.EPROTO)
			}
			for _, i := range order {
				if b := blocks[i]; b.typ == "tool_use" {
					res.calls = append(res.calls, ToolCall{ID: b.id, Name: b.name, Arguments: jsonArgs(b.args)})
				}
			}
			return res, nil
		case "error":
			return res, fmt.Errorf("the model server reported an error mid-stream: %s: %s (%w)", e.Error.Type, e.Error.Message, syscall.EIO)
		}
	}
}
