package sqlite

// The authorizer callback lives in a file of its own: a file with an
// //export may declare C functions in its preamble but not define them.

/*
#include <stdint.h>
*/
import "C"

import "runtime/cgo"

//export agentfsAuthorize
func agentfsAuthorize(h C.uintptr_t, action C.int, a, b, schema, inner *C.char) C.int {
	auth := cgo.Handle(h).Value().(Authorizer)
	if auth(int(action), goString(a), goString(b), goString(schema), goString(inner)) {
		return 0 // SQLITE_OK
	}
	return 1 // SQLITE_DENY
}

func goString(p *C.char) string {
	if p == nil {
		return ""
	}
	return C.GoString(p)
}
