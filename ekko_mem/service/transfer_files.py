"""The files of export and import: an export written whole or not at all, an import's input
read as lines as often as its passes need, from a file in place or from stdin or a pipe copied
first to a private temporary file."""
from __future__ import annotations

import os
from contextlib import contextmanager, suppress

from ..errors import EkkoError, UsageError

NOTHING = "nothing was imported"
CHUNK = 1 << 20  # bytes read at a time when copying or checking an input


def write_atomically(path: str, chunks) -> None:
    """Write `chunks` to a private temp file beside `path`, then rename it over `path`.

    The target is either the complete new file (mode 0600) or exactly what it was: a failed
    read, a full disk or Ctrl-C removes the temp file. A symlink at `path` is replaced, not
    followed, so an export never writes into whatever file a link points at."""
    folder = os.path.dirname(path) or "."
    temp = os.path.join(folder, f".{os.path.basename(path)}.{os.urandom(8).hex()}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise EkkoError(f"cannot write beside {path}: {exc.strerror or exc}",
                        "check that the folder exists and is writable") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.writelines(chunks)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException as exc:
        with suppress(OSError):
            os.unlink(temp)
        if isinstance(exc, OSError):
            raise EkkoError(f"cannot write {path}: {exc.strerror or exc}",
                            f"check the path and free disk space, then retry; {path} was"
                            " left as it was") from None
        raise
    with suppress(OSError):  # make the rename itself durable
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


# -- the input: read once to check it, once to write it --------------------------------------
class TooLong:
    """Stands for a line longer than limits.line, which is counted, never held; a blank one
    (only whitespace) is skipped as any blank line is."""

    def __init__(self, size: int, blank: bool = False) -> None:
        self.size, self.blank = size, blank


def line_object(number: int, line, cap: int, what: str) -> dict | None:
    """Line `number`'s JSON object, None for a blank one; one over `cap` (a TooLong) is
    refused by its size ("nothing was {what}"), never read."""
    if isinstance(line, TooLong):
        if line.blank:
            return None
        from ..policy.limits import check_size
        check_size(f"line {number}", "", cap, "limits.line", unit="bytes", size=line.size)
    from ..policy.records import json_object
    return json_object(number, line, what=what, max_bytes=cap)


class InputFile:
    """An import's lines from a seekable binary file, as many times as the passes ask.

    Lines split as str.splitlines splits them. Each reading fingerprints the bytes, and a
    reading that differs from the first fails before anything is committed: the file
    that was checked is the file that is written."""

    def __init__(self, handle, start: int = 0) -> None:
        self.handle, self.start = handle, start
        self.digest: bytes | None = None

    def lines(self, cap: int | None = None):
        import hashlib
        self.handle.seek(self.start)
        digest = hashlib.blake2b(digest_size=16)
        # A line's bytes, its break and one more tell a line over the cap without holding it.
        # (A line broken only by \r or the like is one line to that test: export writes \n.)
        limit = -1 if cap is None else cap + 3
        while raw := self.handle.readline(limit):
            digest.update(raw)
            if len(raw) == limit and not raw.endswith(b"\n"):
                yield TooLong(*self._rest_of_line(raw))
                continue
            try:
                text = raw.decode("utf-8", "surrogatepass")
            except UnicodeDecodeError:  # it was UTF-8 when it was checked
                raise _changed() from None
            yield from text.splitlines()
        if self.digest is None:
            self.digest = digest.digest()
        elif digest.digest() != self.digest:
            raise _changed()

    def _rest_of_line(self, raw: bytes) -> tuple[int, bool]:
        """The size of a long line that starts with `raw`, without its break, read to its
        end a chunk at a time; and whether it is only whitespace (as str.strip sees it: an
        ideographic space too), decoded as it goes, however the chunks cut a character."""
        import codecs
        decoder = codecs.getincrementaldecoder("utf-8")("surrogatepass")
        size, last, blank = len(raw), raw[-1:], not decoder.decode(raw).strip()
        while chunk := self.handle.readline(CHUNK):
            size += len(chunk)
            blank = blank and not decoder.decode(chunk).strip()
            if chunk.endswith(b"\n"):
                return size - (2 if (last + chunk).endswith(b"\r\n") else 1), blank
            last = chunk[-1:]
        return size, blank and not decoder.decode(b"", final=True).strip()


def _changed() -> EkkoError:
    return EkkoError("the input changed while it was imported",
                     f"import it again once it is complete; {NOTHING}")


class Listed:
    """Lines already in memory (a list or tuple given to the Python API)."""

    def __init__(self, items) -> None:
        self.items = items

    def lines(self, cap: int | None = None):
        return iter(self.items)


@contextmanager
def open_import(source: str, stdin):
    """The lines of an import's FILE, or of `stdin` for '-'. A regular file is read where it
    is; a pipe or terminal is first copied to a private temporary file (0600, never named in
    a folder, so it is gone when the import ends, on an error or Ctrl-C too). Invalid UTF-8
    anywhere is refused (exit 2) before any line is read."""
    if source == "-":
        import io
        handle, name = stdin if stdin is not None else io.BytesIO(), "stdin"
    else:
        try:
            handle = open(source, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise UsageError(f"cannot read {source}: {exc.strerror}",
                             "check the path, or pass - for stdin") from None
        name = source
    try:
        if _regular(handle):
            start = handle.tell()
            _check_utf8(iter(lambda: handle.read(CHUNK), b""), name)
            yield InputFile(handle, start)
        else:
            import tempfile
            with tempfile.TemporaryFile() as spool:
                try:
                    _check_utf8(_copied(handle, spool), name)
                    spool.flush()
                except OSError as exc:
                    raise EkkoError(f"cannot copy {name} to a temporary file:"
                                    f" {exc.strerror or exc}",
                                    "free space in the temporary folder (TMPDIR), or import"
                                    " from a file") from None
                yield InputFile(spool)
    finally:
        if handle is not stdin:
            handle.close()


@contextmanager
def readable(lines):
    """What `import_lines` was given, readable twice: lines in a list as they are, a
    one-shot iterator of lines (a text file too) copied to a private temporary file first."""
    if isinstance(lines, InputFile):
        yield lines
    elif iter(lines) is not lines:
        yield Listed(lines)
    else:
        import tempfile
        with tempfile.TemporaryFile() as spool:
            for line in lines:
                spool.write(line.removesuffix("\n").encode("utf-8", "surrogatepass") + b"\n")
            yield InputFile(spool)


def _regular(handle) -> bool:
    import io
    import stat
    try:
        return stat.S_ISREG(os.fstat(handle.fileno()).st_mode) and handle.seekable()
    except (OSError, ValueError, io.UnsupportedOperation):
        return False


def _copied(source, target):
    """Copy `source` into `target` a chunk at a time, yielding each chunk."""
    while chunk := source.read(CHUNK):
        target.write(chunk)
        yield chunk


def _check_utf8(chunks, name: str) -> None:
    import codecs
    decoder = codecs.getincrementaldecoder("utf-8")()
    done = held = 0  # bytes fed, and how many of them the decoder still holds
    try:
        for chunk in chunks:
            held = len(decoder.getstate()[0])
            decoder.decode(chunk)
            done += len(chunk)
        held = len(decoder.getstate()[0])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:  # its offsets count from the bytes held before
        raise UsageError(f"{name} is not valid UTF-8 (byte {done - held + exc.start})",
                         "convert it first, for example with iconv -t UTF-8") from None
