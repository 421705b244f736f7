"""Fuzz segkit's kernel-cache reader with mutated entries (issue 32).

A tiny package of two kernels (``f`` calls ``g``: ``f(20) == 41``) is
compiled once into a private cache; then, in child processes, the entry of
``f`` is replaced by a mutated copy (bits flipped anywhere, in the header,
the machine code or the bitcode; truncated; extended; spans overwritten;
headers rewritten; forged entries with a recomputed checksum that another
user owns or anyone may write) and read back through the cache, as a first
call would.  An entry that is accepted must be run and give 41; anything
else must be a miss (compiled again in real use).  A child that dies
(a signal) is a crash.

    python tools/fuzz_kernel_cache.py --count 1000      # the issue's figure
    python tools/fuzz_kernel_cache.py --count 100 --json

Prints the counts per outcome; exits 1 on any crash or wrong output.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = {
    "__init__.py": "",
    "a.py": "from segkit.engine import kernel\nfrom .b import g\n\n\n@kernel\ndef f(x):\n    return g(x) + 1\n",
    "b.py": "from segkit.engine import kernel\n\n\n@kernel\ndef g(x):\n    return x * 2\n",
}

CHILD = r'''
import hashlib, json, os, pickle, random, sys
from pathlib import Path
from probe.a import f
assert f(20) == 41
from segkit.runtime import jit, kernel_cache as kc
d = jit.dispatcher_of(f)
sig, cache, ctx = d.signatures[0], d._cache, d.targetctx
key, name = cache._key(sig, ctx.codegen().magic_tuple())
folder = kc._host_folder()
path = folder / name
good = path.read_bytes()
head_end = good.index(b"\n", len(kc.ENTRY_MAGIC)) + 1
payload = good[head_end:]
libdata = pickle.loads(payload)[0]
obj, bitcode = libdata[2]
spans = {"object": (head_end + payload.index(obj[:256]), len(obj)),
         "bitcode": (head_end + payload.index(bitcode[:256]), len(bitcode)),
         "header": (0, head_end), "all": (0, len(good))}
start, count, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed * 1_000_003 + start)
KINDS = ["control-unchanged", "flip-all", "flip-object", "flip-bitcode", "flip-header", "flips-many", "truncate", "extend",
         "overwrite", "header-size", "header-sha", "header-key", "header-json", "forged-other-uid",
         "forged-world-writable"]

def flip(data, span):
    lo, n = spans[span]
    i = lo + rng.randrange(n)
    b = bytearray(data)
    b[i] ^= 1 << rng.randrange(8)
    return bytes(b)

def header(fields):
    return kc.ENTRY_MAGIC + json.dumps(fields).encode() + b"\n"

def mutate(kind):
    base = {"key": key, "size": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}
    mode, owner = 0o600, None
    if kind == "control-unchanged":  # the harness accepts a good entry (else every other count is moot)
        data = good
    elif kind.startswith("flip-") and kind != "flips-many":
        data = flip(good, kind[5:])
    elif kind == "flips-many":
        data = good
        for _ in range(rng.randrange(2, 64)):
            data = flip(data, "all")
    elif kind == "truncate":
        data = good[:rng.randrange(len(good))]
    elif kind == "extend":
        data = good + os.urandom(rng.randrange(1, 4096))
    elif kind == "overwrite":
        i = rng.randrange(len(good))
        n = rng.randrange(1, 512)
        data = good[:i] + os.urandom(n) + good[i + n:]
    elif kind == "header-size":
        data = header(dict(base, size=rng.choice([0, len(payload) - 1, len(payload) + 1, -1, 2**70, "12", None]))) + payload
    elif kind == "header-sha":
        data = header(dict(base, sha256=rng.choice(["", "0" * 64, base["sha256"].upper(), 5]))) + payload
    elif kind == "header-key":
        data = header(dict(base, key=rng.choice(["", "0" * 64, key[:-1] + "0", None]))) + payload
    elif kind == "header-json":
        data = kc.ENTRY_MAGIC + rng.choice([b"{", b"[]", b"null", b'{"key": 1}', b"\xff\xfe", b"{}" * 600]) + b"\n" + payload
    else:  # forged: a payload of the attacker's (a pickle that makes a file) with a valid header
        # pickle protocol 0 for open(FUZZ_MARKER, "w"): run, it makes the file
        evil = b"cbuiltins\nopen\n(V" + os.environ["FUZZ_MARKER"].encode() + b"\nVw\ntR."
        data = kc.entry_bytes(key, evil)
        if kind == "forged-other-uid":
            owner = 12345
        else:
            mode = 0o666
    return data, mode, owner

counts = {}
for i in range(start, start + count):
    kind = KINDS[i % len(KINDS)]
    data, mode, owner = mutate(kind)
    tmp = folder / ".fuzz.tmp"
    tmp.write_bytes(data)
    os.chmod(tmp, mode)
    if owner is not None:
        os.chown(tmp, owner, owner)
    os.replace(tmp, path)
    kc._said.clear()
    try:
        cres = cache.load_overload(sig, ctx)
    except BaseException as e:  # the reader must never raise: a miss is None
        outcome = f"raised {type(e).__name__}"
    else:
        if cres is None:
            outcome = "refused (compiled again in real use)"
        else:
            outcome = "loaded, right result" if cres.entry_point(20) == 41 else "loaded, WRONG result"
            if data != good:
                outcome += " (mutated bytes accepted)"
    counts[f"{kind}: {outcome}"] = counts.get(f"{kind}: {outcome}", 0) + 1
path.write_bytes(good)
print(json.dumps(counts))
'''


def fuzz(count: int, seed: int = 0, batch: int = 250) -> dict:
    """Run ``count`` mutations; returns the counts per kind and outcome, and
    the crashes (child processes that died)."""
    with tempfile.TemporaryDirectory(prefix="segkit-fuzz-kc-") as tmp:
        src = Path(tmp) / "src" / "probe"
        src.mkdir(parents=True)
        for name, text in PROBE.items():
            (src / name).write_text(text, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "SEGKIT_JIT"))}
        env.update(PYTHONPATH=os.pathsep.join([str(Path(tmp) / "src"), str(ROOT)]), PYTHONDONTWRITEBYTECODE="1",
                   NUMBA_CACHE_DIR=str(Path(tmp) / "numba"), SEGKIT_JIT_SHIPPED="0",
                   FUZZ_MARKER=str(Path(tmp) / "forged-code-ran"))
        # Compile once (the children then load f from the cache first).
        subprocess.run([sys.executable, "-c", "from probe.a import f; assert f(20) == 41"], env=env, check=True,
                       timeout=600)
        counts: dict[str, int] = {}
        crashes: list[str] = []
        for start in range(0, count, batch):
            n = min(batch, count - start)
            proc = subprocess.run([sys.executable, "-c", CHILD, str(start), str(n), str(seed)], env=env,
                                  capture_output=True, text=True, timeout=1200)
            if proc.returncode != 0:
                crashes.append(f"mutations {start}..{start + n - 1}: exit status {proc.returncode}: "
                               f"{proc.stderr[-1500:]}")
                continue
            for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items():
                counts[k] = counts.get(k, 0) + v
        forged_ran = (Path(tmp) / "forged-code-ran").exists()
    controls = sum(v for k, v in counts.items() if k.startswith("control-"))
    if counts.get("control-unchanged: loaded, right result", 0) != controls:
        crashes.append(f"the unchanged entry was not loaded every time: {counts}")
    wrong = sum(v for k, v in counts.items() if "WRONG" in k or "raised" in k)
    return {"mutations": count, "counts": dict(sorted(counts.items())), "crashes": crashes, "wrong": wrong,
            "forged_code_ran": forged_ran}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = ap.parse_args()
    result = fuzz(args.count, args.seed)
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result["counts"].items():
            print(f"{v:6d}  {k}")
        print(f"{args.count} mutated entries: {len(result['crashes'])} crashed batches, {result['wrong']} wrong, "
              f"forged code ran: {result['forged_code_ran']}")
        for c in result["crashes"]:
            print(c)
    return 1 if result["crashes"] or result["wrong"] or result["forged_code_ran"] else 0


if __name__ == "__main__":
    sys.exit(main())
