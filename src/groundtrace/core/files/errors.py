"""Errors tied to a place in a file: one ``file:line: message`` shape for every reader."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class LineError(BaseModel):
    """A problem tied to one line of one file (1-based line number); ``str()`` is ``file:line: message``
    (``file: message`` when ``line`` is 0: a problem of the whole file, such as a missing one)."""

    model_config = ConfigDict(frozen=True)
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        if self.line <= 0:
            return f"{self.file}: {self.message}"
        return f"{self.file}:{self.line}: {self.message}"
