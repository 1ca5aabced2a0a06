package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"unicode/utf8"

	"github.com/agentfs-go/agentfs/core/kv"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// toolError turns an engine error into the text of a tool error: the POSIX
// code name first, then the operation and path, then the message, as
// "ENOENT: open /a.txt: no such file or directory".
func toolError(err error) error {
	var te *textError
	if errors.As(err, &te) {
		return te
	}
	if errno := vfs.Errno(err); errno != 0 {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return &textError{fmt.Sprintf("%s: %s %s: %s", vfs.ErrnoName(errno), pe.Op, pe.Path, errno.Error())}
		}
		return &textError{fmt.Sprintf("%s: %v", vfs.ErrnoName(errno), err)}
	}
	return &textError{err.Error()}
}

// textError is an error already in its final form.
type textError struct{ msg string }

func (e *textError) Error() string { return e.msg }

// errorf makes a tool error that carries a POSIX code name, for checks
// done by this package before calling the engine.
func errorf(errno syscall.Errno, format string, a ...any) error {
	return &textError{vfs.ErrnoName(errno) + ": " + fmt.Sprintf(format, a...)}
}

// isNotFound reports a missing key of the kv store.
func isNotFound(err error) bool { return errors.Is(err, kv.ErrNotFound) }

// Limits of what the tool-call log keeps of parameters and results: the
// log is a trace, not a copy of the data (a write_file carries the file).
const (
	logStringMax = 256     // longer strings are cut
	logArrayMax  = 20      // longer arrays are cut
	logTotalMax  = 8 << 10 // a larger value is replaced by its size
)

// shorten encodes v as JSON for the tool-call log, cutting long strings
// and arrays, and replacing a value still too large by a note of its size.
func shorten(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	var raw []byte
	if r, ok := v.(json.RawMessage); ok {
		raw = r
	} else {
		b, err := marshal(v)
		if err != nil {
			return nil
		}
		raw = b
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil
	}
	out, err := marshal(shortenValue(x))
	if err != nil {
		return nil
	}
	if len(out) > logTotalMax {
		out, _ = marshal(map[string]any{"truncated": true, "json_bytes": len(raw)})
	}
	return out
}

func shortenValue(x any) any {
	switch v := x.(type) {
	case string:
		if len(v) <= logStringMax {
			return v
		}
		cut := logStringMax
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		return fmt.Sprintf("%s... (%d bytes)", v[:cut], len(v))
	case []any:
		n := len(v)
		if n > logArrayMax {
			v = append(v[:logArrayMax:logArrayMax], fmt.Sprintf("... (%d items)", n))
		}
		for i := range v {
			v[i] = shortenValue(v[i])
		}
		return v
	case map[string]any:
		for k, e := range v {
			v[k] = shortenValue(e)
		}
		return v
	}
	return x
}

// marshal is json.Marshal without escaping <, > and &.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
