package commands

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"unsafe"

	"github.com/itchyny/gojq"
)

// jqOrder gives jq's output the key order real jq shows. gojq holds
// objects as Go maps, which have no order, and sorts keys when it prints;
// jq keeps the order in which keys were inserted. The order is rebuilt
// at encoding time from what is known:
//
//   - an object read from the input, passed through unchanged (".", ".a",
//     select, .[]) is the same Go map: its keys come in input order;
//   - a new object whose keys are all those of one object construction
//     of the filter ({b: .x, a: .y}, {name, age}) follows the filter;
//   - any other new object (del, .a = 1, . + {c: 1}, with_entries) puts
//     keys in the order they were first seen in the input, then those
//     first written in the filter, then the rest sorted.
//
// -S sorts as before.
type jqOrder struct {
	byMap    map[unsafe.Pointer][]string
	rank     map[string]int
	literals [][]string
}

func newJQOrder() *jqOrder {
	return &jqOrder{byMap: map[unsafe.Pointer][]string{}, rank: map[string]int{}}
}

func mapID(m map[string]any) unsafe.Pointer { return reflect.ValueOf(m).UnsafePointer() }

// seen records a key of the input.
func (o *jqOrder) seen(k string) {
	if _, ok := o.rank[k]; !ok {
		o.rank[k] = len(o.rank)
	}
}

// addQuery records the keys of the object constructions of q.
func (o *jqOrder) addQuery(q *gojq.Query) {
	seenLit := map[string]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				if obj, ok := v.Interface().(*gojq.Object); ok {
					var keys []string
					for _, kv := range obj.KeyVals {
						switch {
						case kv.Key != "":
							k := kv.Key
							if k[0] == '$' {
								k = k[1:]
							}
							keys = append(keys, k)
						case kv.KeyString != nil && len(kv.KeyString.Queries) == 0:
							keys = append(keys, kv.KeyString.Str)
						}
					}
					if len(keys) > 0 {
						o.literals = append(o.literals, keys)
					}
				}
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(q))
	base := len(o.rank) + 1<<20
	n := 0
	for _, keys := range o.literals {
		for _, k := range keys {
			if !seenLit[k] {
				seenLit[k] = true
				if _, ok := o.rank[k]; !ok {
					o.rank[k] = base + n
					n++
				}
			}
		}
	}
}

// keys lists the keys of m in output order.
func (o *jqOrder) keys(m map[string]any) []string {
	if o != nil {
		if ks, ok := o.byMap[mapID(m)]; ok && len(ks) == len(m) {
			return ks
		}
		for _, lit := range o.literals {
			if len(lit) == len(m) && hasAll(m, lit) {
				return lit
			}
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, iok := o.rankOf(keys[i])
		rj, jok := o.rankOf(keys[j])
		switch {
		case iok && jok:
			return ri < rj
		case iok != jok:
			return iok
		}
		return keys[i] < keys[j]
	})
	return keys
}

func (o *jqOrder) rankOf(k string) (int, bool) {
	if o == nil {
		return 0, false
	}
	r, ok := o.rank[k]
	return r, ok
}

func hasAll(m map[string]any, keys []string) bool {
	seen := map[string]bool{}
	for _, k := range keys {
		if _, ok := m[k]; !ok || seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

// decode reads one JSON value from dec, keeping the key order of its
// objects (numbers stay json.Number: dec uses UseNumber).
func (o *jqOrder) decode(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	return o.value(dec, tok, 0)
}

// maxJSONDepth bounds nesting as encoding/json does, so that deep input
// cannot exhaust the stack.
const maxJSONDepth = 10000

func (o *jqOrder) value(dec *json.Decoder, tok json.Token, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, &json.SyntaxError{}
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			arr := []any{}
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := o.value(dec, tok, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		case '{':
			m := map[string]any{}
			var keys []string
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := tok.(string)
				tok, err = dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := o.value(dec, tok, depth+1)
				if err != nil {
					return nil, err
				}
				if _, dup := m[k]; !dup {
					keys = append(keys, k)
					o.seen(k)
				}
				m[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			o.byMap[mapID(m)] = keys
			return m, nil
		}
	}
	return tok, nil
}

// jqOrderDefs redefine, in the scope of the user's filter, the builtins
// that list keys in jq's order (gojq's sort them): to_entries,
// with_entries and keys_unsorted.
func jqOrderDefs() []*gojq.FuncDef {
	q, err := gojq.Parse(`def keys_unsorted: _agentfs_keys;
def to_entries: [_agentfs_keys[] as $k | {key: $k, value: .[$k]}];
def with_entries(f): to_entries | map(f) | from_entries;
.`)
	if err != nil {
		panic(err) // a constant
	}
	return q.FuncDefs
}

// keysFunction is _agentfs_keys: the keys of an object in output order,
// the indices of an array.
func (o *jqOrder) keysFunction() gojq.CompilerOption {
	return gojq.WithFunction("_agentfs_keys", 0, 0, func(v any, _ []any) any {
		switch x := v.(type) {
		case map[string]any:
			ks := o.keys(x)
			out := make([]any, len(ks))
			for i, k := range ks {
				out[i] = k
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i := range x {
				out[i] = i
			}
			return out
		}
		return fmt.Errorf("%s has no keys", jqTypeName(v))
	})
}

func jqTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null (null)"
	case bool:
		return "boolean"
	case string:
		return "string"
	}
	return "number"
}
