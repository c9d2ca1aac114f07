"""Which local image files a SKU may name: confined to the images folder, real images, bounded size.

SKU records are untrusted input: ``images: ["/etc/passwd", "../.env", "~/.ssh/id_rsa"]`` must never make
the OCR or VLM sources read (let alone send to an endpoint) a file outside ``--images``. The contract of
:func:`open_image`:

* the reference is a *relative* path (no drive, no leading ``/`` or ``~``, no ``..`` part, no NUL);
* ``(base_dir / ref).resolve()`` lies inside ``base_dir.resolve()`` — a symlink that points outside the
  folder is refused, checked *before* the file is opened;
* it is a regular file of at most ``max_bytes`` (default 20 MiB; checked on ``stat`` and again while
  reading, so a file that grows cannot exceed it);
* its first bytes are the signature of a supported image type (:data:`IMAGE_SIGNATURES`: PNG, JPEG, GIF,
  WebP, BMP, TIFF) — the content decides, never the extension; the MIME type sent to a vision model is the
  detected one.

Anything else raises :class:`ImageRefused` with a one-line reason; the sources turn it into a per-SKU issue
and go on with the next image.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath, PureWindowsPath

#: Default size bound of one image (bytes).
MAX_IMAGE_BYTES = 20 * 1024 * 1024

#: ``(prefix, offset, mime)``: magic bytes of the image types that may be read or sent.
IMAGE_SIGNATURES: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"WEBP", 8, "image/webp"),  # RIFF....WEBP
    (b"BM", 0, "image/bmp"),
    (b"II*\x00", 0, "image/tiff"),
    (b"MM\x00*", 0, "image/tiff"),
)


class ImageRefused(ValueError):
    """An image reference that is not read (outside the folder, not an image, too large, missing)."""


def sniff_image_type(head: bytes) -> str | None:
    """The MIME type of an image from its first bytes, ``None`` when no supported signature matches."""
    for prefix, offset, mime in IMAGE_SIGNATURES:
        if head[offset : offset + len(prefix)] == prefix:
            if mime == "image/webp" and not head.startswith(b"RIFF"):
                continue
            return mime
    return None


def _check_ref(ref: str) -> None:
    if not ref or "\x00" in ref:
        raise ImageRefused(f"{ref!r}: not a usable image path")
    posix, windows = PurePosixPath(ref), PureWindowsPath(ref)
    if posix.is_absolute() or windows.is_absolute() or windows.drive or ref.startswith(("~", "\\")):
        raise ImageRefused(f"{ref}: absolute image paths are not allowed (give a path inside --images)")
    if ".." in posix.parts or ".." in windows.parts:
        raise ImageRefused(f"{ref}: '..' in an image path is not allowed (give a path inside --images)")


def resolve_image(ref: str, base_dir: str | Path) -> Path:
    """The real path of ``ref`` inside ``base_dir`` (raises :class:`ImageRefused`, see the module doc)."""
    _check_ref(ref)
    base = Path(base_dir).resolve()
    try:
        path = (base / ref).resolve(strict=True)
    except (FileNotFoundError, NotADirectoryError):
        raise ImageRefused(f"{ref}: image not found in {base_dir}") from None
    except (OSError, RuntimeError) as exc:  # symlink loop, permission
        raise ImageRefused(f"{ref}: cannot resolve image path ({exc})") from None
    if not path.is_relative_to(base):
        raise ImageRefused(f"{ref}: resolves outside the images folder {base_dir} (symlink?); not read")
    return path


def open_image(ref: str, base_dir: str | Path, max_bytes: int = MAX_IMAGE_BYTES) -> tuple[bytes, str]:
    """``(bytes, detected MIME type)`` of the image ``ref`` under ``base_dir`` (raises ImageRefused)."""
    path = resolve_image(ref, base_dir)
    # O_NONBLOCK: opening a FIFO planted in the folder must not hang; O_NOFOLLOW: no late symlink swap
    flags = (
        os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    )
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ImageRefused(f"{ref}: cannot open image ({exc.strerror})") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise ImageRefused(f"{ref}: not a regular file; not read")
    if info.st_size > max_bytes:
        os.close(fd)
        raise ImageRefused(f"{ref}: image of {info.st_size} bytes exceeds the {max_bytes}-byte limit")
    with os.fdopen(fd, "rb") as fh:
        head = fh.read(16)
        mime = sniff_image_type(head)
        if mime is None:
            raise ImageRefused(f"{ref}: not a PNG/JPEG/GIF/WebP/BMP/TIFF image (content check); not read")
        data = head + fh.read(max_bytes + 1 - len(head))
    if len(data) > max_bytes:
        raise ImageRefused(f"{ref}: image exceeds the {max_bytes}-byte limit")
    return data, mime
