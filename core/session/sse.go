package session

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
)

// sseEvent is one server-sent event: its type ("" when the server sent
// no event: line) and its data lines joined by "\n".
type sseEvent struct {
	Event string
	Data  string
}

// sseReader reads server-sent events (the WHATWG event-stream format)
// from a response body, failing once more than max bytes were read, so a
// server cannot grow the engine's memory without bound.
type sseReader struct {
	r    *bufio.Reader
	max  int64
	read int64
}

func newSSEReader(body io.Reader, max int64) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(body, 16<<10), max: max}
}

// errTooLarge is a response past Options.MaxResponseBytes.
var errTooLarge = errors.New("response too large")

// next returns the next event, io.EOF at a clean end of the stream (no
// partial event pending), or io.ErrUnexpectedEOF when the stream stops
// inside an event.
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data []string
	pending := false
	for {
		line, err := s.r.ReadString('\n')
		s.read += int64(len(line))
		if s.max > 0 && s.read > s.max {
			return ev, fmt.Errorf("%w: more than %d bytes (%w)", errTooLarge, s.max, syscall.EFBIG)
		}
		if err != nil {
			if err == io.EOF {
				if pending || line != "" {
					return ev, io.ErrUnexpectedEOF
				}
				return ev, io.EOF
			}
			return ev, err
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			if !pending {
				continue
			}
			ev.Data = strings.Join(data, "\n")
			return ev, nil
		}
		if strings.HasPrefix(line, ":") {
			continue // a comment (keep-alive)
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Event, pending = value, true
		case "data":
			data, pending = append(data, value), true
		}
	}
}
