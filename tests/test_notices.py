"""``segkit.runtime.notices.slow_step``: a slow step is announced once, and
on a terminal the line moves at least once a second until it is done."""

from __future__ import annotations

import io
import sys
import time

import pytest

from segkit.runtime import notices


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_a_counter_moves_and_ends(monkeypatch) -> None:
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setattr(notices, "TICK", 0.05)
    with notices.slow_step("segkit: test step A"):
        time.sleep(0.3)
    out = term.getvalue()
    first, counter, rest = out.split("\n")
    assert first == "segkit: test step A" and rest == ""
    assert counter.count("\r  ") >= 4  # moved at least three times, then ended
    assert counter.rsplit("\r", 1)[1].startswith("  done in 0.")
    assert max(map(len, counter.split("\r"))) < 20  # short: never wraps on a narrow terminal
    with notices.slow_step("segkit: test step A"):  # said once per process
        pass
    assert term.getvalue() == out


def test_elsewhere_one_line_and_errors_pass_through(monkeypatch) -> None:
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    with pytest.raises(KeyError):
        with notices.slow_step("segkit: test step B"):
            raise KeyError("x")
    assert pipe.getvalue() == "segkit: test step B\n"


def test_a_failed_step_says_stopped(monkeypatch) -> None:
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with pytest.raises(KeyboardInterrupt):
        with notices.slow_step("segkit: test step C"):
            raise KeyboardInterrupt
    assert term.getvalue() == "segkit: test step C\n\r  stopped\n"


def test_a_closed_stream_is_not_an_error(monkeypatch) -> None:
    closed = Terminal()
    closed.close()
    monkeypatch.setattr(sys, "stderr", closed)
    with notices.slow_step("segkit: test step D"):
        value = 1
    assert value == 1


def test_a_line_said_during_a_step_gets_its_own_line(monkeypatch) -> None:
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setattr(notices, "TICK", 0.05)
    with notices.slow_step("segkit: test step E"):
        time.sleep(0.08)
        notices.say("segkit: compiling kernels (first run only, ~10 s)")
        time.sleep(0.08)
    lines = term.getvalue().split("\n")
    assert lines[0] == "segkit: test step E"
    assert lines[1].startswith("\r  ") and lines[2] == "segkit: compiling kernels (first run only, ~10 s)"
    assert "done in" in lines[3]


def test_silenced_says_nothing(monkeypatch) -> None:
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with notices.silenced():
        with notices.slow_step("segkit: test step F"):
            notices.say("segkit: compiling kernels")
    assert term.getvalue() == ""
    with notices.silenced(False):
        notices.say("segkit: said")
    assert term.getvalue() == "segkit: said\n"
