package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/agentfs-go/agentfs/core/sandbox/commands"
)

// Binding is a host function the script runs as a command:
//
//	name --some-flag value --count 3
//	name --json '{"some_flag":"value","count":3}'
//	name --help
//
// Flags in kebab-case map onto the properties of Schema (a JSON schema
// of type object): "--some-flag" matches a property "some-flag",
// "some_flag" or "someFlag". Values are typed by the schema: integer,
// number, boolean ("--flag" alone is true, or "--flag=false"), string,
// array (the flag repeated) and object (JSON). "--json -" reads the
// arguments from stdin. The result is printed as JSON on stdout (exit
// 0); an error prints "name: message" on stderr (exit 1); invalid
// arguments exit 2. Bindings obey the policy's Allow and Deny lists and
// count as commands toward the limits; they take precedence over the
// built-in utilities of the same name.
type Binding struct {
	Name        string
	Description string
	// Schema is the JSON schema of the arguments: an object with
	// properties (and optionally required). Nil means no arguments.
	Schema json.RawMessage
	Func   func(ctx context.Context, args json.RawMessage) (any, error)
}

type propSchema struct {
	Type        any             `json:"type"`
	Description string          `json:"description"`
	Items       *propSchema     `json:"items"`
	Enum        []any           `json:"enum"`
	Default     json.RawMessage `json:"default"`
}

func (p *propSchema) typ() string {
	if p == nil {
		return ""
	}
	switch t := p.Type.(type) {
	case string:
		return t
	case []any:
		// ["string","null"]: the first non-null type.
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}

type objSchema struct {
	Type       any                    `json:"type"`
	Properties map[string]*propSchema `json:"properties"`
	Required   []string               `json:"required"`
}

type binding struct {
	Binding
	schema objSchema
	names  []string // property names, sorted
}

var bindingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

func compileBindings(list []Binding, reg *commands.Registry) (map[string]*binding, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out := map[string]*binding{}
	for _, b := range list {
		if out[b.Name] != nil {
			return nil, fmt.Errorf("sandbox: binding %q registered twice", b.Name)
		}
		if b.Func == nil {
			return nil, fmt.Errorf("sandbox: binding %q has no Func", b.Name)
		}
		cb := &binding{Binding: b}
		if err := checkBinding(b.Name, b.Schema, &cb.schema); err != nil {
			return nil, err
		}
		for k := range cb.schema.Properties {
			cb.names = append(cb.names, k)
		}
		sort.Strings(cb.names)
		out[b.Name] = cb
	}
	return out, nil
}

// CheckBinding reports what Options.Bindings would refuse in a binding
// of this name and schema (for an audit that registers none).
func CheckBinding(name string, schema json.RawMessage) error {
	var o objSchema
	return checkBinding(name, schema, &o)
}

func checkBinding(name string, schema json.RawMessage, into *objSchema) error {
	if !bindingName.MatchString(name) {
		return fmt.Errorf("sandbox: binding name %q is not a valid command name", name)
	}
	if interp.IsBuiltin(name) || syntax.IsKeyword(name) || isShell(name) || strings.HasPrefix(name, "agentfs") {
		return fmt.Errorf("sandbox: binding name %q is reserved by the shell", name)
	}
	if len(bytes.TrimSpace(schema)) > 0 {
		if err := json.Unmarshal(schema, into); err != nil {
			return fmt.Errorf("sandbox: binding %q: schema: %w", name, err)
		}
		if t, ok := into.Type.(string); ok && t != "object" {
			return fmt.Errorf("sandbox: binding %q: schema type must be object, not %q", name, t)
		}
	}
	return nil
}

// kebab turns a property name into its flag: some_flag, someFlag -> some-flag.
func kebab(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '_':
			b.WriteByte('-')
		case r >= 'A' && r <= 'Z':
			if i > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r + ('a' - 'A'))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// property finds the property a flag names.
func (b *binding) property(flag string) (string, *propSchema) {
	if p, ok := b.schema.Properties[flag]; ok {
		return flag, p
	}
	for _, n := range b.names {
		if kebab(n) == flag {
			return n, b.schema.Properties[n]
		}
	}
	return "", nil
}

type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

func argErrorf(format string, a ...any) error { return &argError{fmt.Sprintf(format, a...)} }

// parseArgs turns the command line into the JSON arguments.
func (b *binding) parseArgs(args []string, stdin io.Reader) (json.RawMessage, error) {
	if len(args) >= 1 && args[0] == "--json" || len(args) >= 1 && strings.HasPrefix(args[0], "--json=") {
		var raw string
		if v, ok := strings.CutPrefix(args[0], "--json="); ok {
			if len(args) > 1 {
				return nil, argErrorf("--json takes all the arguments: unexpected %q", args[1])
			}
			raw = v
		} else {
			if len(args) != 2 {
				return nil, argErrorf("--json takes one argument, a JSON object")
			}
			raw = args[1]
		}
		if raw == "-" {
			data, err := io.ReadAll(stdin)
			if err != nil {
				return nil, argErrorf("--json: reading stdin: %v", err)
			}
			raw = string(data)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(raw), &obj); err != nil || obj == nil {
			return nil, argErrorf("--json: invalid JSON object")
		}
		for _, r := range b.schema.Required {
			if _, ok := obj[r]; !ok {
				return nil, argErrorf("missing required argument --%s", kebab(r))
			}
		}
		if b.schema.Properties != nil {
			for k := range obj {
				if _, ok := b.schema.Properties[k]; !ok {
					return nil, argErrorf("unknown argument %q", k)
				}
			}
		}
		return json.RawMessage(raw), nil
	}
	obj := map[string]any{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return nil, argErrorf("unexpected argument %q", args[i+1])
			}
			break
		}
		if !strings.HasPrefix(a, "--") || len(a) == 2 {
			return nil, argErrorf("unexpected argument %q: arguments are --flag VALUE or --json JSON", a)
		}
		flag, val, hasVal := strings.Cut(a[2:], "=")
		name, prop := b.property(flag)
		negated := false
		if prop == nil && strings.HasPrefix(flag, "no-") {
			if n, p := b.property(flag[3:]); p != nil && p.typ() == "boolean" && !hasVal {
				name, prop, negated = n, p, true
			}
		}
		if prop == nil {
			return nil, argErrorf("unknown argument --%s", flag)
		}
		typ := prop.typ()
		if typ == "boolean" {
			v := !negated
			if hasVal {
				bv, err := strconv.ParseBool(val)
				if err != nil {
					return nil, argErrorf("argument --%s: %q is not a boolean", flag, val)
				}
				v = bv
			} else if i+1 < len(args) && (args[i+1] == "true" || args[i+1] == "false") {
				i++
				v = args[i] == "true"
			}
			obj[name] = v
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, argErrorf("argument --%s needs a value", flag)
			}
			i++
			val = args[i]
		}
		if typ == "array" {
			v, err := typedValue(prop.Items.typ(), val)
			if err != nil {
				return nil, argErrorf("argument --%s: %v", flag, err)
			}
			list, _ := obj[name].([]any)
			obj[name] = append(list, v)
			continue
		}
		if _, dup := obj[name]; dup {
			return nil, argErrorf("argument --%s given twice", flag)
		}
		v, err := typedValue(typ, val)
		if err != nil {
			return nil, argErrorf("argument --%s: %v", flag, err)
		}
		if len(prop.Enum) > 0 && !inEnum(prop.Enum, v) {
			return nil, argErrorf("argument --%s: %q is not one of the allowed values", flag, val)
		}
		obj[name] = v
	}
	for _, r := range b.schema.Required {
		if _, ok := obj[r]; !ok {
			return nil, argErrorf("missing required argument --%s", kebab(r))
		}
	}
	return json.Marshal(obj)
}

func inEnum(enum []any, v any) bool {
	vj, _ := json.Marshal(v)
	for _, e := range enum {
		ej, _ := json.Marshal(e)
		if bytes.Equal(ej, vj) {
			return true
		}
	}
	return false
}

func typedValue(typ, val string) (any, error) {
	switch typ {
	case "integer":
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", val)
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", val)
		}
		return f, nil
	case "boolean":
		bv, err := strconv.ParseBool(val)
		if err != nil {
			return nil, fmt.Errorf("%q is not a boolean", val)
		}
		return bv, nil
	case "object", "array":
		var v any
		if err := json.Unmarshal([]byte(val), &v); err != nil {
			return nil, fmt.Errorf("invalid JSON %s", typ)
		}
		if _, ok := v.(map[string]any); typ == "object" && !ok {
			return nil, fmt.Errorf("not a JSON object")
		}
		return v, nil
	case "", "string":
		return val, nil
	}
	// Other types (null...): take JSON if it parses, else the string.
	var v any
	if json.Unmarshal([]byte(val), &v) == nil {
		return v, nil
	}
	return val, nil
}

func (b *binding) help(w io.Writer) {
	fmt.Fprintf(w, "%s", b.Name)
	if b.Description != "" {
		fmt.Fprintf(w, " - %s", b.Description)
	}
	fmt.Fprintf(w, "\n\nUsage: %s [--FLAG VALUE]...\n       %s --json JSON\n", b.Name, b.Name)
	if len(b.names) == 0 {
		fmt.Fprintf(w, "\nNo arguments.\n")
		return
	}
	req := map[string]bool{}
	for _, r := range b.schema.Required {
		req[r] = true
	}
	fmt.Fprintf(w, "\nArguments:\n")
	for _, n := range b.names {
		p := b.schema.Properties[n]
		typ := p.typ()
		if typ == "array" {
			typ = p.Items.typ() + "... (repeat the flag)"
			if p.Items.typ() == "" {
				typ = "value... (repeat the flag)"
			}
		}
		if typ == "" {
			typ = "value"
		}
		line := fmt.Sprintf("  --%s %s", kebab(n), strings.ToUpper(typ[:1])+typ[1:])
		if p.typ() == "boolean" {
			line = fmt.Sprintf("  --%s", kebab(n))
		}
		var notes []string
		if req[n] {
			notes = append(notes, "required")
		}
		if len(p.Enum) > 0 {
			e, _ := json.Marshal(p.Enum)
			notes = append(notes, "one of "+string(e))
		}
		if len(p.Default) > 0 {
			notes = append(notes, "default "+string(p.Default))
		}
		desc := p.Description
		if len(notes) > 0 {
			desc = strings.TrimSpace(desc + " (" + strings.Join(notes, ", ") + ")")
		}
		fmt.Fprintf(w, "%-32s %s\n", line, desc)
	}
}

// run runs the binding as a command.
func (b *binding) run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 2 && (args[1] == "--help" || args[1] == "-h") {
		b.help(stdout)
		return 0
	}
	in, err := b.parseArgs(args[1:], stdin)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\nTry '%s --help' for more information.\n", b.Name, err, b.Name)
		return 2
	}
	res, err := b.Func(ctx, in)
	if err != nil {
		var ae *argError
		if errors.As(err, &ae) {
			fmt.Fprintf(stderr, "%s: %v\n", b.Name, err)
			return 2
		}
		fmt.Fprintf(stderr, "%s: %s\n", b.Name, strings.TrimSpace(err.Error()))
		return 1
	}
	var out []byte
	switch r := res.(type) {
	case json.RawMessage:
		out = r
		if !json.Valid(out) {
			fmt.Fprintf(stderr, "%s: the binding returned invalid JSON\n", b.Name)
			return 1
		}
	default:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res); err != nil {
			fmt.Fprintf(stderr, "%s: encoding the result: %v\n", b.Name, err)
			return 1
		}
		out = buf.Bytes()
	}
	out = append(bytes.TrimSpace(out), '\n')
	if _, err := stdout.Write(out); err != nil {
		return 1
	}
	return 0
}

// checkNetRule validates a network rule of the policy.
func checkNetRule(r NetRule) error {
	u, err := url.Parse(r.Prefix)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("sandbox: network rule prefix %q must be an http:// or https:// URL with a host", r.Prefix)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("sandbox: network rule prefix %q must not have user info, query or fragment", r.Prefix)
	}
	return nil
}
