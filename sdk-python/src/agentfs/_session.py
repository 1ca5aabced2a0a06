"""Agent sessions (SessionService): a conversation with a model whose tool
calls run on the agent inside the engine (docs/SESSIONS.md). Session is
for the synchronous API, AsyncSession for agentfs.aio; both only call the
engine, which runs the loop, the tools and the storage."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

from .v1 import sandbox_pb2, session_pb2

# ReadSessionEvents waits this long for events before answering empty.
_WAIT_MS = 30000


class PromptError(Exception):
    """A prompt failed (its "error" event); events holds all it produced."""

    def __init__(self, message: str, events: list[SessionEvent]) -> None:
        super().__init__(f"prompt failed: {message}")
        self.events = events


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """One step of a prompt: type is "text", "tool_call", "tool_result",
    "error" or "done" (always last). arguments and result are parsed JSON."""

    type: str
    text: str = ""
    tool_call_id: str = ""
    tool_name: str = ""
    arguments: Any = None
    result: Any = None
    is_error: bool = False
    error: str = ""
    stop_reason: str = ""
    turn: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    provider: str
    model: str
    messages: int
    created_unix_ms: int = 0
    updated_unix_ms: int = 0


@dataclass(slots=True)
class PromptResult:
    """What Session.run returns: the whole text and every event."""

    text: str
    events: list[SessionEvent] = field(default_factory=list)


def _json(s: str) -> Any:
    if not s:
        return None
    try:
        return json.loads(s)
    except ValueError:
        return s


def event_of(e: session_pb2.SessionEvent) -> SessionEvent:
    return SessionEvent(
        e.type, e.text, e.tool_call_id, e.tool_name, _json(e.arguments_json), _json(e.result_json), e.is_error,
        e.error, e.stop_reason, e.turn, e.input_tokens, e.output_tokens,
    )


def info_of(i: session_pb2.SessionInfo) -> SessionInfo:
    return SessionInfo(i.session_id, i.provider, i.model, i.messages, i.created_unix_ms, i.updated_unix_ms)


def open_request(
    *,
    id: str = "",
    provider: str = "",
    model: str = "",
    base_url: str = "",
    api_key: str = "",
    system: str = "",
    tools: list[str] | None = None,
    read_only: bool = False,
    limits: str = "",
    allow: list[str] | None = None,
    deny: list[str] | None = None,
    readable: list[str] | None = None,
    writable: list[str] | None = None,
    max_turns: int = 0,
    max_tokens: int = 0,
    max_response_bytes: int = 0,
    timeout_ms: int = 0,
) -> session_pb2.OpenSessionRequest:
    pol = sandbox_pb2.ExecRequest(
        limits=limits, allow=allow or [], deny=deny or [], readable=readable or [], writable=writable or [],
        restrict_paths=readable is not None or writable is not None,
    )
    return session_pb2.OpenSessionRequest(
        session_id=id, provider=provider, model=model, base_url=base_url, api_key=api_key, system=system,
        policy=pol, tools=tools or [], read_only=read_only, max_turns=max_turns, max_tokens=max_tokens,
        max_response_bytes=max_response_bytes, timeout_ms=timeout_ms,
    )


class Session:
    """An open agent session (agent.open_session): `for ev in
    session.prompt("...")` streams a prompt's events."""

    def __init__(self, client: Any, info: SessionInfo) -> None:
        self._c, self.info = client, info

    @property
    def id(self) -> str:
        return self.info.id

    def prompt(self, text: str) -> Iterator[SessionEvent]:
        """Sends text; yields its events as they come, "done" last. Leaving
        the loop early cancels the prompt (completed turns stay stored)."""
        self._c.prompt(session_pb2.PromptRequest(session_id=self.id, text=text))
        finished = False
        try:
            while True:
                r = self._c.read_session_events(session_pb2.ReadSessionEventsRequest(session_id=self.id, wait_ms=_WAIT_MS))
                for e in r.events:
                    ev = event_of(e)
                    finished = ev.type == "done"
                    yield ev
                    if finished:
                        return
                if r.idle:
                    finished = True
                    return
        finally:
            if not finished:
                # Stopped early: cancel and drain so the next prompt can start.
                self._c.cancel_prompt(session_pb2.CancelPromptRequest(session_id=self.id))
                while not self._c.read_session_events(session_pb2.ReadSessionEventsRequest(session_id=self.id, wait_ms=1000)).idle:
                    pass

    def run(self, text: str) -> PromptResult:
        """Sends text and returns the whole text; raises PromptError when it failed."""
        out = PromptResult("")
        failure = None
        for ev in self.prompt(text):
            out.events.append(ev)
            if ev.type == "text":
                out.text += ev.text
            elif ev.type == "error":
                failure = ev.error
        if failure is not None:
            raise PromptError(failure, out.events)
        return out

    def cancel(self) -> None:
        self._c.cancel_prompt(session_pb2.CancelPromptRequest(session_id=self.id))

    def close(self) -> None:
        """Cancels a running prompt and forgets the open session; the
        conversation stays stored."""
        self._c.close_session(session_pb2.CloseSessionRequest(session_id=self.id))

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncSession:
    """Session for agentfs.aio: `async for ev in session.prompt("...")`."""

    def __init__(self, client: Any, info: SessionInfo) -> None:
        self._c, self.info = client, info

    @property
    def id(self) -> str:
        return self.info.id

    async def prompt(self, text: str) -> AsyncIterator[SessionEvent]:
        await self._c.prompt(session_pb2.PromptRequest(session_id=self.id, text=text))
        finished = False
        try:
            while True:
                r = await self._c.read_session_events(session_pb2.ReadSessionEventsRequest(session_id=self.id, wait_ms=_WAIT_MS))
                for e in r.events:
                    ev = event_of(e)
                    finished = ev.type == "done"
                    yield ev
                    if finished:
                        return
                if r.idle:
                    finished = True
                    return
        finally:
            if not finished:
                await self._c.cancel_prompt(session_pb2.CancelPromptRequest(session_id=self.id))
                while not (await self._c.read_session_events(session_pb2.ReadSessionEventsRequest(session_id=self.id, wait_ms=1000))).idle:
                    pass

    async def run(self, text: str) -> PromptResult:
        out = PromptResult("")
        failure = None
        async for ev in self.prompt(text):
            out.events.append(ev)
            if ev.type == "text":
                out.text += ev.text
            elif ev.type == "error":
                failure = ev.error
        if failure is not None:
            raise PromptError(failure, out.events)
        return out

    async def cancel(self) -> None:
        await self._c.cancel_prompt(session_pb2.CancelPromptRequest(session_id=self.id))

    async def close(self) -> None:
        await self._c.close_session(session_pb2.CloseSessionRequest(session_id=self.id))

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
