"""LSP base-protocol framing: a bad frame costs only itself, never the valid message after it."""

from __future__ import annotations

import asyncio

import pytest

from pt2lint.lsp import MessageReader

GOOD = b'{"jsonrpc": "2.0", "id": 7, "method": "x"}'


def frame(body: bytes, *headers: bytes) -> bytes:
    return b"".join(h + b"\r\n" for h in headers) + b"\r\n" + body


def read_all(stream: bytes, chunk: int):
    chunks = [stream[i : i + chunk] for i in range(0, len(stream), chunk)]

    def read(n):
        return chunks.pop(0) if chunks else b""

    async def bodies():
        reader = MessageReader(read, max_bytes=1000)
        out, bad = [], []
        while (body := await reader.next_body(bad.append)) is not None:
            out.append(body)
        return out, bad

    return asyncio.run(bodies())


@pytest.mark.parametrize("chunk", [1, 7, 65536])
def test_two_disagreeing_content_lengths_reject_that_frame_only(chunk):
    bad_frame = frame(GOOD, b"Content-Length: 3", b"Content-Length: %d" % len(GOOD))
    out, bad = read_all(bad_frame + frame(GOOD, b"Content-Length: %d" % len(GOOD)), chunk)
    assert out == [GOOD]
    assert len(bad) == 1 and "disagree" in bad[0]


@pytest.mark.parametrize("chunk", [1, 7, 65536])
def test_a_body_longer_than_its_content_length_costs_only_itself(chunk):
    short = frame(GOOD, b"Content-Length: 3")  # 3 bytes are its body, the rest is noise
    out, bad = read_all(short + frame(GOOD, b"Content-Length: %d" % len(GOOD)) + frame(GOOD, b"Content-Length: %d" % len(GOOD)), chunk)
    assert out == [GOOD[:3], GOOD, GOOD]  # the 3 bytes go on to a parse error; both real messages are read
    assert len(bad) == 1 and "not a message header" in bad[0]


def test_the_same_content_length_twice_and_blank_lines_before_headers_are_accepted():
    n = b"Content-Length: %d" % len(GOOD)
    out, bad = read_all(frame(GOOD, n, n) + b"\r\n" + frame(GOOD, n), 5)
    assert out == [GOOD, GOOD] and bad == []
