"""`ssefold fold` on a pseudo-terminal, the stream piped into standard input
while the keys come from the terminal (run by cli/tests/pty.rs).

usage: pty_session.py SSEFOLD_BINARY REPO_ROOT

Checks, printing what it saw on failure:
  * the spinner turns while the first byte is awaited;
  * the first Esc asks for confirmation, the second aborts the turn: exit
    status 130, the partial message printed, though the input is still open;
  * an Esc whose confirmation expired (after a second) only asks again;
  * with standard output a pipe, it holds the message alone;
  * the terminal's modes are restored (raw mode off) at exit;
  * a stream whose text, tool name, arguments and error hold terminal
    controls (OSC 0 title, OSC 52 clipboard, CSI 2J, C1 CSI, BEL) puts only
    the render's own escape sequences on the terminal.
"""

import fcntl
import json
import os
import pty
import re
import select
import struct
import sys
import termios
import time

BIN, ROOT = sys.argv[1], sys.argv[2]
DEMO = open(os.path.join(ROOT, "cli", "src", "demo.sse"), "rb").read()
FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class Session:
    """The binary on a new pty (its controlling terminal), standard input a
    pipe the test writes the stream into, standard output the pty or a pipe."""

    def __init__(self, stdout_pipe: bool = False) -> None:
        data_r, self.data_w = os.pipe()
        out_r, out_w = os.pipe() if stdout_pipe else (None, None)
        pid, fd = pty.fork()
        if pid == 0:
            # An 80x24 terminal (a new pty has no size).
            fcntl.ioctl(2, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
            os.dup2(data_r, 0)
            if out_w is not None:
                os.dup2(out_w, 1)
            os.execv(BIN, [BIN, "fold"])
        os.close(data_r)
        if out_w is not None:
            os.close(out_w)
        self.pid, self.fd, self.out_r = pid, fd, out_r
        self.screen = b""
        self.stdout = b""

    def pump(self, seconds: float) -> None:
        """Collects what the binary writes for `seconds`."""
        end = time.monotonic() + seconds
        fds = [self.fd] + ([self.out_r] if self.out_r is not None else [])
        while fds and (left := end - time.monotonic()) > 0:
            ready, _, _ = select.select(fds, [], [], left)
            for f in ready:
                try:
                    chunk = os.read(f, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    fds.remove(f)
                elif f == self.fd:
                    self.screen += chunk
                else:
                    self.stdout += chunk

    def text(self) -> str:
        return self.screen.decode("utf-8", "replace")

    def plain(self) -> str:
        """The screen's text without escape sequences."""
        return re.sub(r"\x1b(\[[0-9;]*[A-Za-z]|[78])", "", self.text())

    def send(self, data: bytes) -> None:
        os.write(self.data_w, data)

    def key(self, k: bytes) -> None:
        os.write(self.fd, k)

    def wait(self, seconds: float = 10.0) -> int:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.pump(0.05)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.pump(0.2)
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, 9)
        raise AssertionError(f"no exit; screen: {self.text()!r}")


def check(ok: bool, what: str, s: Session) -> None:
    if not ok:
        raise AssertionError(f"{what}\nscreen: {s.text()!r}\nstdout: {s.stdout!r}")


def first_events(n: int) -> bytes:
    return b"".join(e + b"\n\n" for e in DEMO.split(b"\n\n")[:n])


def double_esc_aborts() -> None:
    s = Session()
    s.pump(0.5)
    check(any(f in s.text() for f in FRAMES), "a spinner frame while waiting for the first byte", s)
    s.send(first_events(6))
    s.pump(0.5)
    check("I'll check" in s.text(), "the text streamed so far", s)
    s.key(b"\x1b")
    s.pump(0.4)
    check("Esc again" in s.text(), "the first Esc asks for confirmation", s)
    s.key(b"\x1b")
    code = s.wait()
    check(code == 130, f"exit status 130 after double Esc, got {code}", s)
    tail = s.text()
    check("ssefold fold: aborted" in tail, "the abort reported", s)
    message = json.loads(tail[tail.index("\r\n{") : tail.rindex("}") + 1].replace("\r\n", "\n"))
    check(message["stop_reason"] is None and message["content"][0]["text"].startswith("I'll check"),
          "the partial message", s)
    now = termios.tcgetattr(s.fd)
    check(bool(now[3] & termios.ICANON and now[3] & termios.ECHO and now[1] & termios.OPOST), "terminal modes restored", s)
    os.close(s.data_w)


def an_expired_esc_asks_again() -> None:
    s = Session(stdout_pipe=True)
    s.send(first_events(6))
    s.pump(0.3)
    s.key(b"\x1b")
    s.pump(1.3)
    s.key(b"\x1b")
    s.pump(0.3)
    check(s.stdout == b"", "an Esc after the confirmation expired does not abort", s)
    s.key(b"\x1b")
    code = s.wait()
    check(code == 130, f"exit status 130, got {code}", s)
    message = json.loads(s.stdout)
    check(message["content"][0]["type"] == "text", "standard output holds the message alone", s)
    check("I'll check" in s.text(), "the render went to the terminal (standard error)", s)
    os.close(s.data_w)


def a_whole_stream_ends_normally() -> None:
    s = Session(stdout_pipe=True)
    s.send(DEMO)
    os.close(s.data_w)
    code = s.wait()
    check(code == 0, f"exit status 0, got {code}", s)
    check(json.loads(s.stdout)["stop_reason"] == "tool_use", "the message", s)
    check('\r\n[tool call] get_weather {"location": "Paris, France", ' in s.plain(), "the tool call on its line", s)


def hostile_event(name: str, data: dict) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def a_hostile_stream_cannot_drive_the_terminal() -> None:
    evil = "a\x1b]0;pwned\x07b\x1b]52;c;ZXZpbA==\x07c\x1b[2Jd\x9b2J\x9d0;t\x9c\rfake\x08"
    body = b"".join([
        hostile_event("message_start", {"type": "message_start", "message": {
            "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [],
            "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}),
        hostile_event("content_block_start", {"type": "content_block_start", "index": 0,
                                              "content_block": {"type": "text", "text": ""}}),
        hostile_event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                              "delta": {"type": "text_delta", "text": evil}}),
        hostile_event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        hostile_event("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {
            "type": "tool_use", "id": "t", "name": "tool" + evil, "input": {}}}),
        hostile_event("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps({"x": evil})}}),
        hostile_event("content_block_stop", {"type": "content_block_stop", "index": 1}),
        hostile_event("error", {"type": "error", "error": {"type": "api_error", "message": evil}}),
    ])
    s = Session(stdout_pipe=True)
    s.send(body)
    os.close(s.data_w)
    code = s.wait()
    check(code == 1, f"exit status 1 (the provider error), got {code}", s)
    own = re.compile(r"\x1b(\[[0-9]*A|\[[0-9;]*m|\[K|\[J|[78])")
    rest = own.sub("", s.text())
    bad = [c for c in rest if (ord(c) < 0x20 and c not in "\r\n\t") or 0x7F <= ord(c) <= 0x9F]
    check(not bad, f"only the render's own controls on the terminal, found {bad!r}", s)
    shown = "a\\u{1b}]0;pwned\\u{7}b\\u{1b}]52;c;ZXZpbA==\\u{7}c\\u{1b}[2Jd\\u{9b}2J\\u{9d}0;t\\u{9c}\\u{d}fake\\u{8}"
    check(shown in s.plain(), "the controls shown as escapes", s)
    check("[tool call] tool" + shown in s.plain(), "the tool name escaped", s)
    check("provider error api_error: " + shown in s.plain(), "the error message escaped", s)
    check(json.loads(s.stdout)["content"][0]["text"] == evil, "the message keeps the text", s)


for test in (double_esc_aborts, an_expired_esc_asks_again, a_whole_stream_ends_normally,
             a_hostile_stream_cannot_drive_the_terminal):
    test()
    print(f"ok {test.__name__}")
