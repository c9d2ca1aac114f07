"""Image paths from SKU records stay inside --images, are real images (by content) and bounded in size.

The canary test runs ``run_enrich --images D --vlm URL`` against the local OpenAI-wire server with SKU
image paths that point outside D (absolute, ``..``, a symlink out, ``~``) and checks, with an ``open``
audit hook, that the canary file is never opened and that its bytes never reach the server.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundtrace.catalog.model import SKU
from groundtrace.catalog.pipeline import EnrichConfig, run_enrich
from groundtrace.catalog.sources.image_files import (
    ImageRefused,
    open_image,
    resolve_image,
    sniff_image_type,
)
from groundtrace.core.llm.wire_server import WireServer

PNG = b"\x89PNG\r\n\x1a\n"
CANARY = b"CANARY-SECRET-7f3a"

_OPENED: list[str] = []
_AUDITING: list[bool] = [False]


def _audit(event: str, args: tuple) -> None:  # type: ignore[type-arg]
    if _AUDITING[0] and event == "open" and args and isinstance(args[0], str | bytes | Path):
        _OPENED.append(str(args[0]))


sys.addaudithook(_audit)  # audit hooks cannot be removed; it only records while _AUDITING is on


@pytest.fixture
def images(tmp_path: Path) -> Path:
    folder = tmp_path / "images"
    folder.mkdir()
    (folder / "front.png").write_bytes(PNG + b"front panel")
    (folder / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0jpeg body")
    (folder / "notes.png").write_text("plain text named .png", encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    "ref",
    ["/etc/passwd", "../secret.png", "sub/../../secret.png", "~/secret.png", "C:\\secret.png", "a\x00b.png"],
)
def test_paths_outside_the_folder_are_refused_before_any_open(images: Path, ref: str) -> None:
    (images.parent / "secret.png").write_bytes(PNG + CANARY)
    with pytest.raises(ImageRefused, match="not allowed|not a usable"):
        resolve_image(ref, images)


def test_symlink_out_of_the_folder_is_refused(images: Path) -> None:
    secret = images.parent / "secret.png"
    secret.write_bytes(PNG + CANARY)
    (images / "link.png").symlink_to(secret)
    (images / "inner.png").symlink_to(images / "front.png")  # a link that stays inside is fine
    with pytest.raises(ImageRefused, match="outside the images folder"):
        open_image("link.png", images)
    assert open_image("inner.png", images) == (PNG + b"front panel", "image/png")


def test_content_decides_the_type_and_size_is_bounded(images: Path) -> None:
    assert open_image("photo.jpg", images)[1] == "image/jpeg"
    with pytest.raises(ImageRefused, match="content check"):
        open_image("notes.png", images)
    with pytest.raises(ImageRefused, match="exceeds the 16-byte limit"):
        open_image("front.png", images, max_bytes=16)
    with pytest.raises(ImageRefused, match="not found"):
        open_image("missing.png", images)
    (images / "dir.png").mkdir()
    with pytest.raises(ImageRefused):
        open_image("dir.png", images)


@given(st.binary(max_size=32))
def test_sniffing_accepts_only_known_signatures(head: bytes) -> None:
    mime = sniff_image_type(head)
    known = (PNG, b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM", b"II*\x00", b"MM\x00*")
    webp = head.startswith(b"RIFF") and head[8:12] == b"WEBP"
    assert (mime is not None) == (head.startswith(known) or webp)


def test_canary_outside_images_is_never_read_nor_sent(
    images: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path / "cache"))
    canary = tmp_path / "canary.png"
    canary.write_bytes(PNG + CANARY)
    (images / "link.png").symlink_to(canary)
    refs = [str(canary), "../canary.png", "link.png", "~/canary.png", "notes.png", "front.png"]
    sku = SKU(sku_id="C1", title="Acme Oat Bar", category="grocery", brand="Acme", images=refs)
    skus = tmp_path / "skus.jsonl"
    skus.write_text(sku.model_dump_json() + "\n", encoding="utf-8")
    _OPENED.clear()
    _AUDITING[0] = True
    try:
        with WireServer(lambda req: "ACME OAT BAR") as server:
            summary = run_enrich(
                skus, tmp_path / "out.jsonl", EnrichConfig(images=images, vlm=f"{server.base_url}#vlm")
            )
            bodies = [json.dumps(r) for r in server.requests]
    finally:
        _AUDITING[0] = False
    assert not [p for p in _OPENED if Path(p).name == "canary.png"], _OPENED
    sent = [
        base64.b64decode(json.loads(b)["messages"][-1]["content"][1]["image_url"]["url"].split(",", 1)[1])
        for b in bodies
    ]
    assert sent == [PNG + b"front panel"]  # only the real image inside the folder went out
    assert summary.skus_failed == 0 and summary.skus_processed == 1
    refused = [i for i in summary.issues if i.startswith("C1: ") and "OCR failed" not in i]
    assert len(refused) == 5, summary.issues  # each refused path is a per-SKU issue, once
    assert all("\n" not in i for i in summary.issues)
