"""What the generated clients (agentfs.v1.rpc) call: one unary call, by
procedure path ("/agentfs.v1.FilesystemService/Stat"), request message and
response class. StdioTransport and HttpTransport implement both forms."""

from __future__ import annotations

from typing import Protocol, TypeVar

from google.protobuf.message import Message

M = TypeVar("M", bound=Message)


class Transport(Protocol):
    def unary(self, procedure: str, request: Message, response_type: type[M]) -> M: ...

    def close(self) -> None: ...


class AsyncTransport(Protocol):
    async def unary_async(self, procedure: str, request: Message, response_type: type[M]) -> M: ...
