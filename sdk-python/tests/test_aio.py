"""The asyncio API (agentfs.aio) over both transports."""

from __future__ import annotations

import asyncio

import pytest

from agentfs import aio


async def test_async_api(open_kwargs: dict[str, object]) -> None:
    async with aio.AgentFS.open(**open_kwargs) as agent:  # type: ignore[arg-type]
        fs = agent.fs
        await fs.write_file("/a/b.txt", "hello")
        assert await fs.read_file("/a/b.txt") == "hello"
        assert await fs.read_file("/a/b.txt", None) == b"hello"
        st = await fs.stat("/a/b.txt")
        assert st.size == 5 and st.is_file()
        assert await fs.readdir("/a") == ["b.txt"]
        with pytest.raises(FileNotFoundError) as ei:
            await fs.stat("/missing")
        assert ei.value.filename == "/missing"
        with pytest.raises(IsADirectoryError):
            await fs.read_file("/a")
        async with await fs.open("/h", "w+") as f:
            await f.write(b"abc")
            assert await f.pread(3, 0) == b"abc"
            assert (await f.fstat()).size == 3
        await agent.kv.set("k", [1, 2])
        assert await agent.kv.get("k") == [1, 2]
        assert await agent.kv.list("k") == [{"key": "k", "value": [1, 2]}]
        cid = await agent.tools.start("t", {"x": 1})
        await agent.tools.success(cid, "ok")
        call = await agent.tools.get(cid)
        assert call is not None and call.result == "ok"
        assert (await agent.info()).schema_version == "0.4"


async def test_await_open_and_options(tmp_path) -> None:  # type: ignore[no-untyped-def]
    agent = await aio.AgentFS.open(aio.AgentFSOptions(path=str(tmp_path / "x.db")))
    try:
        await agent.fs.write_file("/f", b"1")
        assert await agent.fs.exists("/f")
        assert not await agent.fs.exists("/g")
    finally:
        await agent.close()


async def test_many_tasks_in_flight(open_kwargs: dict[str, object]) -> None:
    async with aio.AgentFS.open(**open_kwargs) as agent:  # type: ignore[arg-type]
        fs = agent.fs

        async def worker(i: int) -> None:
            for j in range(20):
                await fs.write_file(f"/w{i}/{j}", f"{i}:{j}")
            for j in range(20):
                assert await fs.read_file(f"/w{i}/{j}") == f"{i}:{j}"

        await asyncio.gather(*(worker(i) for i in range(16)))
        assert len(await fs.readdir("/")) == 16


async def test_cancelled_task_does_not_break_the_connection(tmp_path) -> None:  # type: ignore[no-untyped-def]
    async with aio.AgentFS.open(path=str(tmp_path / "c.db")) as agent:
        big = b"x" * (32 << 20)
        task = asyncio.create_task(agent.fs.write_file("/big", big))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # Later calls still get their own answers.
        await agent.fs.write_file("/small", "s")
        assert await agent.fs.read_file("/small") == "s"
