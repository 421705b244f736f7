"""Sending a model to worker processes once, whatever the engine.

:class:`Shipped` wraps a model for a task graph (Dask, Spark, Ray): it
pickles as the model's pickle and its checksum, and unpickling it in a
process that already holds that model returns the one it has, so a worker
process loads a model once however many tasks carry it. segkit models pickle
as their arrays (no rebuild): loading takes milliseconds (see
``docs/corpus_scale.rst``).

>>> import pickle, segkit
>>> wp = segkit.WordPiece(["[UNK]", "a", "##b"])
>>> one = pickle.loads(pickle.dumps(Shipped(wp)))
>>> two = pickle.loads(pickle.dumps(Shipped(wp)))
>>> one.model is two.model, one.model.tokenize("ab")
(True, ['a', '##b'])
"""

from __future__ import annotations

import hashlib
import pickle
import threading
import time
from collections import OrderedDict
from typing import Any

#: models unpickled in this process, by checksum (most recent last)
_MODELS: "OrderedDict[str, Any]" = OrderedDict()
_MODELS_KEPT = 4
_MODELS_LOCK = threading.Lock()
#: (checksum, seconds) of every model this process unpickled
_LOADS: list[tuple[str, float]] = []


class Shipped:
    """A model on its way to worker processes: pickles as its checksum and
    its payload; unpickling in a process that already holds the model
    returns that one, without loading it again (the last
    :data:`_MODELS_KEPT` models are kept per process)."""

    def __init__(self, model: Any, key: str | None = None, nbytes: int = 0) -> None:
        self.model = model
        self._payload = None
        self.key = key
        self.nbytes = nbytes  # the pickled size: what Dask counts for its memory accounting
        if key is None:
            self._payload = pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
            self.key = hashlib.blake2b(self._payload, digest_size=16).hexdigest()
            self.nbytes = len(self._payload)

    def __reduce__(self):
        payload = self._payload
        if payload is None:
            payload = pickle.dumps(self.model, protocol=pickle.HIGHEST_PROTOCOL)
        return (_unship, (self.key, payload))

    def __dask_tokenize__(self):
        return ("segkit-model", self.key)

    def __sizeof__(self) -> int:
        return self.nbytes + 64


def _unship(key: str, payload: bytes) -> Shipped:
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is not None:
            _MODELS.move_to_end(key)
            return Shipped(model, key, len(payload))
    t0 = time.perf_counter()
    model = pickle.loads(payload)
    _LOADS.append((key, time.perf_counter() - t0))
    with _MODELS_LOCK:
        _MODELS[key] = model
        while len(_MODELS) > _MODELS_KEPT:
            _MODELS.popitem(last=False)
    return Shipped(model, key, len(payload))
