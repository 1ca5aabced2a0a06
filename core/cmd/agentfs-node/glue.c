// Node-API glue of the engine addon: argument checks and conversions on
// the JavaScript side of the boundary; the work is in the Go exports of
// main.go (declared in _cgo_export.h).

#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "glue.h"

static napi_value fail(napi_env env, const char *msg) {
	napi_throw_error(env, "EINVAL", msg);
	return NULL;
}

static int bytes_arg(napi_env env, napi_value v, void **data, size_t *len) {
	napi_typedarray_type type;
	napi_value ab;
	size_t off;
	if (napi_get_typedarray_info(env, v, &type, len, data, &ab, &off) != 0 || type != napi_uint8_array) return 0;
	return 1;
}

static int handle_arg(napi_env env, napi_value v, uint32_t *h) {
	return napi_get_value_uint32(env, v, h) == 0;
}

// One piece of engine output on its way to the JavaScript thread.
typedef struct {
	size_t len;
	int end; // 1: the engine finished; the bytes are its last words
	char bytes[];
} chunk;

static void free_chunk(napi_env env, void *data, void *hint) { free(hint); }

// deliver runs on the JavaScript thread: onData(buffer) for output,
// onData(null, message) when the engine has finished.
static void deliver(napi_env env, napi_value cb, void *context, void *data) {
	chunk *c = data;
	if (env == NULL) { // the function is being torn down
		free(c);
		return;
	}
	napi_value argv[2], undef, res;
	napi_get_undefined(env, &undef);
	if (c->end) {
		napi_get_null(env, &argv[0]);
		napi_create_string_utf8(env, c->bytes, c->len, &argv[1]);
		free(c);
		napi_call_function(env, undef, cb, 2, argv, &res);
		return;
	}
	if (napi_create_external_buffer(env, c->len, c->bytes, free_chunk, c, &argv[0]) != 0) {
		void *p;
		napi_create_buffer(env, c->len, &p, &argv[0]);
		memcpy(p, c->bytes, c->len);
		free(c);
	}
	napi_call_function(env, undef, cb, 1, argv, &res);
}

// link_drop ends one holder's use of l (its lock held) and frees l after
// the last.
static void link_drop(agentfs_link *l) {
	int last = --l->holders == 0;
	pthread_mutex_unlock(&l->mu);
	if (last) {
		pthread_mutex_destroy(&l->mu);
		free(l);
	}
}

// link_env_gone runs on the JavaScript thread when Node's environment is
// torn down, before the thread-safe function is deleted.
static void link_env_gone(void *arg) {
	agentfs_link *l = arg;
	pthread_mutex_lock(&l->mu);
	l->gone = 1;
	link_drop(l);
}

void agentfs_send(agentfs_link *l, const void *p, size_t n, int end) {
	chunk *c = malloc(sizeof(chunk) + n);
	if (c == NULL) abort();
	c->len = n;
	c->end = end;
	memcpy(c->bytes, p, n);
	pthread_mutex_lock(&l->mu);
	if (l->gone || l->released || napi_call_threadsafe_function(l->tsfn, c, napi_tsfn_nonblocking) != 0) free(c);
	pthread_mutex_unlock(&l->mu);
}

void agentfs_release(agentfs_link *l) {
	pthread_mutex_lock(&l->mu);
	if (!l->gone && !l->released) napi_release_threadsafe_function(l->tsfn, napi_tsfn_release);
	l->released = 1;
	link_drop(l);
}

napi_value agentfs_result(napi_env env, const void *head, size_t hn, const void *data, size_t dn) {
	napi_value out;
	void *p;
	if (napi_create_buffer(env, hn + dn, &p, &out) != 0) return fail(env, "agentfs: cannot allocate the result buffer");
	memcpy(p, head, hn);
	if (dn) memcpy((char *)p + hn, data, dn);
	return out;
}

// agentfs_alloc allocates zeroed memory owned by JavaScript (an
// ArrayBuffer) for a synchronous call to read file data into.
void *agentfs_alloc(napi_env env, size_t n, napi_value *arraybuffer) {
	void *p;
	if (napi_create_arraybuffer(env, n, &p, arraybuffer) != 0) return NULL;
	return p;
}

// agentfs_view is a Uint8Array over part of an ArrayBuffer from agentfs_alloc.
napi_value agentfs_view(napi_env env, napi_value arraybuffer, size_t offset, size_t length) {
	napi_value out;
	if (napi_create_typedarray(env, napi_uint8_array, length, arraybuffer, offset, &out) != 0)
		return fail(env, "agentfs: cannot create the result view");
	return out;
}

// start(onData) -> handle: starts an engine connection.
static napi_value js_start(napi_env env, napi_callback_info info) {
	size_t argc = 1;
	napi_value argv[1], name, out;
	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != 0 || argc < 1) return fail(env, "start(onData) needs a function");
	agentfs_link *l = calloc(1, sizeof(agentfs_link));
	if (l == NULL) return fail(env, "agentfs: out of memory");
	napi_create_string_utf8(env, "agentfs-engine", NAPI_AUTO_LENGTH_, &name);
	if (napi_create_threadsafe_function(env, argv[0], NULL, name, 0, 1, NULL, NULL, NULL, deliver, &l->tsfn) != 0) {
		free(l);
		return fail(env, "start(onData) needs a function");
	}
	pthread_mutex_init(&l->mu, NULL);
	l->holders = 2;
	// Added after the function's own hook, so it runs before it (Node runs
	// cleanup hooks in reverse order).
	napi_add_env_cleanup_hook(env, link_env_gone, l);
	napi_create_uint32(env, agentfsStart(l), &out);
	return out;
}

// handle_bytes_args reads the arguments (handle, Uint8Array) of a call.
static int handle_bytes_args(napi_env env, napi_callback_info info, uint32_t *h, void **p, size_t *n) {
	size_t argc = 2;
	napi_value argv[2];
	return napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == 0 && argc >= 2 && handle_arg(env, argv[0], h) &&
	       bytes_arg(env, argv[1], p, n);
}

// write(handle, bytes): bytes from the client to the engine.
static napi_value js_write(napi_env env, napi_callback_info info) {
	uint32_t h;
	void *p;
	size_t n;
	if (!handle_bytes_args(env, info, &h, &p, &n)) return fail(env, "write(handle, Uint8Array)");
	agentfsWrite(h, p, n);
	return NULL;
}

// hello(handle, frame) -> the serialized answer frame (Welcome, or the
// Result of a refusal): the handshake, made on this thread. frame is the
// client's Hello without the length prefix. Undefined when the engine has
// already finished.
static napi_value js_hello(napi_env env, napi_callback_info info) {
	uint32_t h;
	void *p;
	size_t n;
	if (!handle_bytes_args(env, info, &h, &p, &n) || n == 0) return fail(env, "hello(handle, frame: Uint8Array)");
	return agentfsHello(env, h, p, n);
}

// end(handle): the client will write no more (like closing stdin).
static napi_value js_end(napi_env env, napi_callback_info info) {
	size_t argc = 1;
	napi_value argv[1];
	uint32_t h;
	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != 0 || argc < 1 || !handle_arg(env, argv[0], &h))
		return fail(env, "end(handle)");
	agentfsEnd(h);
	return NULL;
}

// call(handle, method, payload) -> serialized agentfs.v1.Result, computed
// on this thread.
static napi_value js_call(napi_env env, napi_callback_info info) {
	size_t argc = 3;
	napi_value argv[3];
	uint32_t h;
	void *m, *p;
	size_t mn, pn;
	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != 0 || argc < 3 || !handle_arg(env, argv[0], &h) ||
	    !bytes_arg(env, argv[1], &m, &mn) || !bytes_arg(env, argv[2], &p, &pn))
		return fail(env, "call(handle, method: Uint8Array, payload: Uint8Array)");
	return agentfsCall(env, h, m, mn, p, pn);
}

// submit(handle, id, method, head, data?): starts a call answered by a
// Result frame with this id. data (WriteFile and Pwrite file data) is read
// where it lies: the caller keeps it alive until the answer.
static napi_value js_submit(napi_env env, napi_callback_info info) {
	size_t argc = 5;
	napi_value argv[5];
	uint32_t h, id;
	void *m, *p, *d = NULL;
	size_t mn, pn, dn = 0;
	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != 0 || argc < 4 || !handle_arg(env, argv[0], &h) ||
	    napi_get_value_uint32(env, argv[1], &id) != 0 || !bytes_arg(env, argv[2], &m, &mn) || !bytes_arg(env, argv[3], &p, &pn) ||
	    (argc >= 5 && !bytes_arg(env, argv[4], &d, &dn)))
		return fail(env, "submit(handle, id, method: Uint8Array, head: Uint8Array, data?: Uint8Array)");
	agentfsSubmit(h, id, m, mn, p, pn, d, dn);
	return NULL;
}

// ref(handle, keepAlive): whether pending output keeps Node running.
static napi_value js_ref(napi_env env, napi_callback_info info) {
	size_t argc = 2;
	napi_value argv[2];
	uint32_t h;
	bool on;
	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != 0 || argc < 2 || !handle_arg(env, argv[0], &h) ||
	    napi_get_value_bool(env, argv[1], &on) != 0)
		return fail(env, "ref(handle, boolean)");
	agentfs_link *l = agentfsLink(h);
	if (l != NULL) {
		pthread_mutex_lock(&l->mu);
		if (!l->gone && !l->released) {
			if (on) napi_ref_threadsafe_function(env, l->tsfn);
			else napi_unref_threadsafe_function(env, l->tsfn);
		}
		pthread_mutex_unlock(&l->mu);
	}
	return NULL;
}

static void define(napi_env env, napi_value exports, const char *name, napi_callback cb) {
	napi_value fn;
	napi_create_function(env, name, NAPI_AUTO_LENGTH_, cb, NULL, &fn);
	napi_set_named_property(env, exports, name, fn);
}

__attribute__((visibility("default"))) napi_value napi_register_module_v1(napi_env env, napi_value exports) {
	define(env, exports, "start", js_start);
	define(env, exports, "write", js_write);
	define(env, exports, "hello", js_hello);
	define(env, exports, "end", js_end);
	define(env, exports, "call", js_call);
	define(env, exports, "submit", js_submit);
	define(env, exports, "ref", js_ref);
	return exports;
}
