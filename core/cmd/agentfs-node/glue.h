#ifndef AGENTFS_GLUE_H
#define AGENTFS_GLUE_H

#include "napi_min.h"

#define NAPI_AUTO_LENGTH_ ((size_t)-1)

void agentfs_send(napi_threadsafe_function tsfn, const void *p, size_t n, int end);
void agentfs_release(napi_threadsafe_function tsfn);
void *agentfs_alloc(napi_env env, size_t n, napi_value *arraybuffer);
napi_value agentfs_view(napi_env env, napi_value arraybuffer, size_t offset, size_t length);
napi_value agentfs_result(napi_env env, const void *head, size_t hn, const void *data, size_t dn);

#endif
