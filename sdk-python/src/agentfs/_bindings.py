"""Host bindings of sandbox scripts: functions of this process that a
script run by agent.exec calls as commands (`lookup --id 7`). The engine
calls back over the stdio connection (HostService.CallBinding) while the
script runs; each callback runs on a thread of its own, so a binding may
itself call the agent."""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from collections.abc import Callable
from typing import Any

from ._errors import FailedPreconditionError
from .v1 import sandbox_pb2

CALL_BINDING = "/agentfs.v1.HostService/CallBinding"

Binding = Callable[[dict[str, Any]], Any]


class Bindings:
    """The bindings of the scripts running now on one transport, by name."""

    def __init__(self, transport: Any) -> None:
        self._transport = transport
        self._lock = threading.Lock()
        self._fns: dict[str, tuple[Binding, asyncio.AbstractEventLoop | None, int]] = {}

    def specs(self, bindings: dict[str, Binding] | None, listing: bool = False) -> list[sandbox_pb2.BindingSpec]:
        """The specs of bindings; listing (policy()) calls none, so needs no
        transport that can call back."""
        if not bindings:
            return []
        if not listing and not hasattr(self._transport, "serve"):
            raise FailedPreconditionError(
                "exec: bindings need the stdio transport (the HTTP server cannot call this process)"
            )
        out = []
        for name, fn in bindings.items():
            schema = getattr(fn, "schema", None)
            out.append(
                sandbox_pb2.BindingSpec(
                    name=name,
                    description=(inspect.getdoc(fn) or "").split("\n")[0],
                    schema_json=json.dumps(schema) if schema else "",
                )
            )
        return out

    def register(self, bindings: dict[str, Binding] | None, loop: asyncio.AbstractEventLoop | None = None) -> None:
        if not bindings:
            return
        with self._lock:
            first = not self._fns
            for name, fn in bindings.items():
                users = self._fns.get(name, (fn, loop, 0))[2]
                self._fns[name] = (fn, loop, users + 1)
        if first:
            self._transport.serve(CALL_BINDING, self._call)

    def unregister(self, bindings: dict[str, Binding] | None) -> None:
        if not bindings:
            return
        with self._lock:
            for name in bindings:
                fn, loop, users = self._fns.get(name, (None, None, 0))
                if users > 1:
                    self._fns[name] = (fn, loop, users - 1)  # type: ignore[assignment]
                else:
                    self._fns.pop(name, None)
            last = not self._fns
        if last:
            self._transport.serve(CALL_BINDING, None)

    def _call(self, payload: bytes) -> bytes:
        req = sandbox_pb2.CallBindingRequest.FromString(payload)
        with self._lock:
            entry = self._fns.get(req.name)
        resp = sandbox_pb2.CallBindingResponse()
        if entry is None:
            resp.error = f"no binding named {req.name} is registered"
            return resp.SerializeToString()
        fn, loop, _ = entry
        try:
            value = fn(json.loads(req.args_json) if req.args_json else {})
            if inspect.isawaitable(value):
                if loop is None:
                    raise TypeError(f"binding {req.name} is a coroutine function: use agentfs.aio")
                value = asyncio.run_coroutine_threadsafe(_await(value), loop).result()
            if value is not None:
                resp.result_json = json.dumps(value)
        except Exception as e:  # the script sees "name: message", exit 1
            resp.error = str(e) or type(e).__name__
        return resp.SerializeToString()


async def _await(v: Any) -> Any:
    return await v
