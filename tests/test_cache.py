"""The model cache must not trust a folder or entry another local user can
write (issue 17, section 3)."""

from __future__ import annotations

import os
import stat
import warnings

import pytest

import segkit
from segkit.models import cache

TINY = ["[UNK]", "un", "##aff", "##able"]
OTHER = ["[UNK]", "##able", "un", "##aff"]  # same tokens, ids swapped


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(cache, "_WARNED", set())


class Builds:
    """A build function that counts its calls."""

    def __init__(self, tokens=TINY):
        self.tokens = tokens
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return segkit.WordPiece(self.tokens)


def use_cache(folder, monkeypatch, build, name="m.segkit"):
    monkeypatch.setenv("SEGKIT_CACHE_DIR", str(folder))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = cache.cached(name, build, segkit.load)
    return model, [str(w.message) for w in caught]


def test_folder_is_created_private_and_entries_0600(tmp_path, monkeypatch):
    folder = tmp_path / "a" / "cache"
    old = os.umask(0)  # the most permissive umask
    try:
        model, warned = use_cache(folder, monkeypatch, Builds())
    finally:
        os.umask(old)
    assert warned == []
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    entry = folder / "m.segkit"
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert [p.name for p in folder.iterdir()] == ["m.segkit"]  # no temporary file left
    build = Builds()
    again, warned = use_cache(folder, monkeypatch, build)
    assert build.calls == 0 and warned == []
    assert again.encode("unaffable", add_special_tokens=False).ids == [1, 2, 3]


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777])
def test_folder_writable_by_others_is_not_used(tmp_path, monkeypatch, mode):
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, mode)
    # Another user planted a valid model with other ids under the expected name.
    segkit.WordPiece(OTHER).save(folder / "m.segkit")
    build = Builds()
    model, warned = use_cache(folder, monkeypatch, build)
    assert build.calls == 1
    assert model.encode("unaffable", add_special_tokens=False).ids == [1, 2, 3]
    assert len(warned) == 1 and "writable by other users" in warned[0] and str(folder) in warned[0]
    _, warned = use_cache(folder, monkeypatch, build)
    assert build.calls == 2 and warned == []  # one warning per process
    assert sorted(p.name for p in folder.iterdir()) == ["m.segkit"]  # nothing written


def test_folder_of_another_user_is_not_used(tmp_path, monkeypatch):
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    segkit.WordPiece(OTHER).save(folder / "m.segkit")
    monkeypatch.setattr(cache, "_current_uid", lambda: os.geteuid() + 1)
    build = Builds()
    model, warned = use_cache(folder, monkeypatch, build)
    assert build.calls == 1
    assert model.encode("unaffable", add_special_tokens=False).ids == [1, 2, 3]
    assert len(warned) == 1 and "owned by user id" in warned[0]


def test_symlinked_folder_of_another_user_is_not_used(tmp_path, monkeypatch):
    target = tmp_path / "mine"
    target.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(target)
    real_lstat = os.lstat

    def lstat(p, *a, **k):  # the link appears to belong to someone else
        st = real_lstat(p, *a, **k)
        if os.fspath(p) == str(link):
            fields = list(st)
            fields[stat.ST_UID] = os.geteuid() + 1
            return os.stat_result(fields)
        return st

    monkeypatch.setattr(cache.os, "lstat", lstat)
    build = Builds()
    _, warned = use_cache(link, monkeypatch, build)
    assert build.calls == 1 and len(warned) == 1 and "symbolic link" in warned[0]
    assert list(target.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_entry_of_another_user_is_not_used(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    entry = folder / "m.segkit"
    segkit.WordPiece(OTHER).save(entry)
    os.chmod(entry, 0o600)
    os.chown(entry, 12345, -1)
    build = Builds()
    model, warned = use_cache(folder, monkeypatch, build)
    assert build.calls == 1 and len(warned) == 1 and "owned by user id 12345" in warned[0]
    assert model.encode("unaffable", add_special_tokens=False).ids == [1, 2, 3]
    assert entry.stat().st_uid == 12345  # left alone


def test_entry_writable_by_others_is_not_used(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    entry = folder / "m.segkit"
    segkit.WordPiece(OTHER).save(entry)
    os.chmod(entry, 0o666)
    build = Builds()
    model, warned = use_cache(folder, monkeypatch, build)
    assert build.calls == 1 and len(warned) == 1 and "writable by other users" in warned[0]
    assert model.encode("unaffable", add_special_tokens=False).ids == [1, 2, 3]


def test_symlink_entry_is_not_followed(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    planted = tmp_path / "planted.segkit"
    segkit.WordPiece(OTHER).save(planted)
    (folder / "m.segkit").symlink_to(planted)
    build = Builds()
    model, warned = use_cache(folder, monkeypatch, build)
    assert build.calls == 1 and len(warned) == 1 and "not a regular file" in warned[0]
    assert model.encode("unaffable", add_special_tokens=False).ids == [1, 2, 3]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped"])
def test_damaged_entry_is_rebuilt_replaced_and_warned(tmp_path, monkeypatch, damage):
    folder = tmp_path / "cache"
    use_cache(folder, monkeypatch, Builds())
    entry = folder / "m.segkit"
    raw = entry.read_bytes()
    if damage == "garbage":
        bad = b"garbage"
    elif damage == "truncated":
        bad = raw[: len(raw) // 2]
    else:
        bad = raw[:-8] + bytes(b ^ 0xFF for b in raw[-8:])
    entry.write_bytes(bad)
    build = Builds()
    model, warned = use_cache(folder, monkeypatch, build)
    assert build.calls == 1 and len(warned) == 1 and "damaged" in warned[0]
    assert model.encode("unaffable", add_special_tokens=False).ids == [1, 2, 3]
    assert entry.read_bytes() == raw  # replaced by the rebuilt model
    build = Builds()
    _, warned = use_cache(folder, monkeypatch, build)
    assert build.calls == 0 and warned == []


def test_save_does_not_write_through_a_planted_link(tmp_path, monkeypatch):
    # A victim's private file, and links to it at the temporary names a save
    # might use: the old predictable one, and the first random one tried.
    victim = tmp_path / "victim.txt"
    victim.write_text("private")
    target = tmp_path / "model.segkit"
    (tmp_path / f".model.segkit.{os.getpid()}.tmp").symlink_to(victim)
    (tmp_path / ".model.segkit.planted.tmp").symlink_to(victim)
    names = iter(["planted", "fresh"])
    import segkit.models.files

    monkeypatch.setattr(segkit.models.files.secrets, "token_hex", lambda n: next(names))
    segkit.WordPiece(TINY).save(target)
    assert victim.read_text() == "private"
    assert segkit.load(target).encode("unaffable", add_special_tokens=False).ids == [1, 2, 3]
    assert next(names, None) is None  # the planted name was skipped, not opened


def test_cache_off_builds_without_touching_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("SEGKIT_CACHE_DIR", "off")
    build = Builds()
    cache.cached("m.segkit", build, segkit.load)
    assert build.calls == 1


def test_stale_temporary_files_are_removed(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    stale = folder / ".old.segkit.abc123.tmp"
    fresh = folder / ".new.segkit.def456.tmp"  # maybe another process storing now
    stale.write_bytes(b"partial")
    fresh.write_bytes(b"partial")
    old = os.stat(stale).st_mtime - cache.STALE_TMP_SECONDS - 10
    os.utime(stale, (old, old))
    use_cache(folder, monkeypatch, Builds())
    assert sorted(p.name for p in folder.iterdir()) == [fresh.name, "m.segkit"]
