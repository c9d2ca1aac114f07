"""The effect pumps: one program, run sync and async, with results and exceptions fed back."""

from __future__ import annotations

import asyncio

import pytest

from groundtrace.core.llm.steps import Program, Sleep, run_async, run_sync


class Boom(Exception):
    pass


def program(log: list[str]) -> Program[str]:
    """Asks for 'a'; on Boom sleeps 1 s and asks for 'b'; returns what it got; always logs 'closed'."""
    try:
        try:
            got = yield "a"
        except Boom:
            yield Sleep(1.0)
            got = yield "b"
        return f"got {got}"
    finally:
        log.append("closed")


def perform_sync(effects: list[object]):
    def perform(effect: object) -> object:
        effects.append(effect)
        if effect == "a":
            raise Boom
        return None if isinstance(effect, Sleep) else effect.upper()  # type: ignore[attr-defined]

    return perform


def test_sync_and_async_pumps_perform_the_same_effects() -> None:
    sync_effects: list[object] = []
    sync_log: list[str] = []
    assert run_sync(program(sync_log), perform_sync(sync_effects)) == "got B"

    async_effects: list[object] = []
    async_log: list[str] = []
    inner = perform_sync(async_effects)

    async def aperform(effect: object) -> object:
        await asyncio.sleep(0)
        return inner(effect)

    assert asyncio.run(run_async(program(async_log), aperform)) == "got B"
    assert sync_effects == async_effects == ["a", Sleep(1.0), "b"]
    assert sync_log == async_log == ["closed"]


def test_unhandled_exception_propagates_and_the_program_finishes() -> None:
    log: list[str] = []

    performed: list[object] = []

    def perform(effect: object) -> object:
        performed.append(effect)
        if isinstance(effect, Sleep):
            return None
        raise Boom  # 'a' fails (handled by the program), then 'b' fails too (not handled)

    with pytest.raises(Boom):
        run_sync(program(log), perform)
    assert performed == ["a", Sleep(1.0), "b"] and log == ["closed"]


def test_cancellation_closes_the_program() -> None:
    log: list[str] = []

    async def never(effect: object) -> object:
        await asyncio.sleep(3600)

    async def main() -> None:
        task = asyncio.create_task(run_async(program(log), never))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert log == ["closed"]  # the program's finally ran (the LLM engine records usage there)


def test_a_program_without_effects_returns_at_once() -> None:
    def immediate() -> Program[int]:
        return 7
        yield  # pragma: no cover - makes this a generator

    assert run_sync(immediate(), lambda e: pytest.fail("no effect expected")) == 7
