#ifndef AGENTFS_GLUE_H
#define AGENTFS_GLUE_H

#include "napi_min.h"

#define NAPI_AUTO_LENGTH_ ((size_t)-1)

#include <pthread.h>

// agentfs_link is an engine connection's way to JavaScript: its
// thread-safe function, which Go's threads may use only while Node's
// environment lives. Node deletes the function when the environment is
// torn down (process exit), whatever threads still hold it, so a cleanup
// hook marks the link gone under the lock that every use takes. Freed by
// the last of its two holders (the Go side's release, the hook).
typedef struct agentfs_link {
	napi_threadsafe_function tsfn;
	pthread_mutex_t mu;
	int gone;     // the environment is being torn down: tsfn is no more
	int released; // the Go side released tsfn
	int holders;
} agentfs_link;

void agentfs_send(agentfs_link *l, const void *p, size_t n, int end);
void agentfs_release(agentfs_link *l);
void *agentfs_alloc(napi_env env, size_t n, napi_value *arraybuffer);
napi_value agentfs_view(napi_env env, napi_value arraybuffer, size_t offset, size_t length);
napi_value agentfs_result(napi_env env, const void *head, size_t hn, const void *data, size_t dn);

#endif
