"""Obviously-correct SentencePiece BPE, for tests: the peer's normalizer,
then BPE as defined, written naively.

* the symbols are the characters of the normalized text, a user-defined
  symbol (longest first) being one frozen symbol;
* repeatedly, of all adjacent pairs of unfrozen symbols whose concatenation
  is a NORMAL, USER_DEFINED or UNUSED piece, the one of highest score is
  merged, the leftmost of equal scores (a full scan each time: O(n^2));
* an UNUSED piece is split back into the two symbols it was last
  *registered* from: pairs are registered when SentencePiece's heap would
  see them (all initial pairs left to right, then after each merge the pair
  on its left and the pair on its right);
* a symbol that is no piece is ``unk`` (a run of them one ``unk``) or, with
  byte fallback, its UTF-8 bytes as ``<0xNN>`` pieces.

The model is read with protobuf's generated module that ships with
``sentencepiece`` (independent of segkit's reader).
"""

from __future__ import annotations

MERGEABLE = (1, 4, 5)  # NORMAL, USER_DEFINED, UNUSED


class ReferenceBPE:
    def __init__(self, model_file: str) -> None:
        import sentencepiece as spm
        from sentencepiece import sentencepiece_model_pb2 as pb

        proto = pb.ModelProto()
        with open(model_file, "rb") as fh:
            proto.ParseFromString(fh.read())
        self.sp = spm.SentencePieceProcessor(model_file=model_file)
        self.ids = {p.piece: i for i, p in enumerate(proto.pieces)}
        self.types = [p.type for p in proto.pieces]
        self.scores = [p.score for p in proto.pieces]
        self.user = sorted((p.piece for p in proto.pieces if p.type == 4), key=len, reverse=True)
        self.unk = next(i for i, t in enumerate(self.types) if t == 2)
        self.byte_fallback = proto.trainer_spec.byte_fallback

    def _score(self, piece: str) -> float | None:
        i = self.ids.get(piece)
        return self.scores[i] if i is not None and self.types[i] in MERGEABLE else None

    def encode(self, text: str) -> list[int]:
        normalized = self.sp.normalize(text)
        symbols: list[str] = []
        frozen: list[bool] = []
        i = 0
        while i < len(normalized):
            match = next((u for u in self.user if normalized.startswith(u, i)), None)
            symbols.append(match or normalized[i])
            frozen.append(match is not None)
            i += len(symbols[-1])
        rev: dict[str, tuple[str, str]] = {}

        def register(a: int, b: int) -> None:
            if 0 <= a and b < len(symbols) and not frozen[a] and not frozen[b]:
                piece = symbols[a] + symbols[b]
                if self._score(piece) is not None and self.types[self.ids[piece]] == 5:
                    rev[piece] = (symbols[a], symbols[b])

        for a in range(len(symbols) - 1):
            register(a, a + 1)
        while True:
            best = None
            for a in range(len(symbols) - 1):
                if frozen[a] or frozen[a + 1]:
                    continue
                s = self._score(symbols[a] + symbols[a + 1])
                if s is not None and (best is None or s > best[0]):
                    best = (s, a)
            if best is None:
                break
            a = best[1]
            symbols[a : a + 2] = [symbols[a] + symbols[a + 1]]
            del frozen[a + 1]
            register(a - 1, a)
            register(a, a + 1)
        out: list[int] = []
        prev_unk = False

        def emit(piece: str) -> None:
            nonlocal prev_unk
            i = self.ids.get(piece, self.unk)
            if self.types[i] == 5 and piece in rev:
                emit(rev[piece][0])
                emit(rev[piece][1])
                return
            if self.types[i] == 2:
                if self.byte_fallback:
                    out.extend(self.ids[f"<0x{b:02X}>"] for b in piece.encode("utf-8"))
                elif not prev_unk:
                    out.append(i)
                prev_unk = True
            else:
                out.append(i)
                prev_unk = False

        for s in symbols:
            emit(s)
        return out
