"""Write a waiting procedure once, run it sync or async: generator "programs" and two pumps.

A *program* is a generator that yields effects (what it needs done: send a request, sleep) and receives
each effect's result, or has the effect's exception thrown in at the ``yield`` — so ``try/except``
around a ``yield`` handles a failed request exactly as it would around a direct call. Its ``return``
value is the program's result. :func:`run_sync` performs the effects with a plain function,
:func:`run_async` with a coroutine function; every decision (re-asks, retries, back-off, fall-back)
lives in the program and is therefore written once for both.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from contextlib import closing
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")
Program = Generator[Any, Any, T]


@dataclass(frozen=True)
class Sleep:
    """Effect: wait ``seconds`` before going on."""

    seconds: float


class _Stepper(Generic[T]):
    """Advances a program with results or exceptions; ``done``/``value`` once it returned."""

    def __init__(self, program: Program[T]) -> None:
        self._program = program
        self.done = False
        self.value: T | None = None
        self.effect: Any = self._advance(program.send, None)

    def _advance(self, step: Callable[[Any], Any], arg: Any) -> Any:
        try:
            return step(arg)
        except StopIteration as stop:
            self.done, self.value = True, stop.value
            return None

    def feed(self, result: Any, error: BaseException | None) -> None:
        """Resume the program with the last effect's ``result``, or throw ``error`` into it."""
        if error is not None:
            self.effect = self._advance(self._program.throw, error)
        else:
            self.effect = self._advance(self._program.send, result)


def run_sync(program: Program[T], perform: Callable[[Any], Any]) -> T:
    """Run ``program`` to its return value, performing each effect with ``perform(effect)``."""
    with closing(program):  # a program abandoned by a BaseException still runs its ``finally``
        stepper = _Stepper(program)
        while not stepper.done:
            try:
                result, error = perform(stepper.effect), None
            except Exception as exc:  # noqa: BLE001 - thrown into the program, which decides
                result, error = None, exc
            stepper.feed(result, error)
        return stepper.value  # type: ignore[return-value]


async def run_async(program: Program[T], perform: Callable[[Any], Awaitable[Any]]) -> T:
    """Async twin of :func:`run_sync`: ``await perform(effect)`` for each effect."""
    with closing(program):  # e.g. cancellation: the program's ``finally`` still runs
        stepper = _Stepper(program)
        while not stepper.done:
            stepper.feed(*await _outcome(perform, stepper.effect))
        return stepper.value  # type: ignore[return-value]


async def _outcome(perform: Callable[[Any], Awaitable[Any]], effect: Any) -> tuple[Any, Exception | None]:
    try:
        return await perform(effect), None
    except Exception as exc:  # noqa: BLE001 - thrown into the program, which decides
        return None, exc
