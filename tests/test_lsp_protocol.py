"""``pt2lint lsp`` against a hostile or careless client, over raw stdio.

Every request gets an answer (JSON-RPC 2.0 / LSP 3.17 error objects), a broken frame
costs that frame only, deep documents linted at once never take the process down, and a
lint's time is bounded, so slow documents do not hold up a small one.
"""

from __future__ import annotations

import json
import os
import pathlib
import queue
import subprocess
import sys
import textwrap
import threading
import time

import pytest

pytest.importorskip("pygls")

REPO = pathlib.Path(__file__).resolve().parent.parent
MODEL = "import torch\n\n@torch.compile\ndef f(x):\n    return x.sum().item()\n"

# The real server, with lint_document_result slowed down for documents that say SLOW
# (sleeping in small steps, as a long pure-Python analysis would run).
SLOW_SERVER = textwrap.dedent(
    """\
    import sys, time
    import pt2lint.lsp as lsp

    _real = lsp.lint_document_result

    def lint_document_result(source, path, uri, project, overlay=None):
        if "SLOW" in source:
            end = time.monotonic() + 60
            while time.monotonic() < end:
                time.sleep(0.01)
        return _real(source, path, uri, project, overlay)

    lsp.lint_document_result = lint_document_result
    sys.exit(lsp.serve(0.0))
    """
)


class Client:
    """A minimal LSP client: framed JSON over the server's stdin/stdout."""

    def __init__(self, tmp_path: pathlib.Path, script: str = "", env: dict = None):
        cmd = [sys.executable, "-c", script] if script else [sys.executable, "-m", "pt2lint", "lsp", "--debounce-ms", "0"]
        full_env = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
        full_env.pop("PT2LINT_CACHE_DIR", None)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, env=full_env)
        self.root = tmp_path
        self.inbox: "queue.Queue" = queue.Queue()
        self.seen = []
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 1

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put(None)
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            self.inbox.put(json.loads(out.read(length)))

    def raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj) -> None:
        body = json.dumps(obj).encode()
        self.raw(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def request(self, method, params=None, null_params=False):
        msg_id, self.next_id = self.next_id, self.next_id + 1
        msg = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None or null_params:
            msg["params"] = params
        self.send(msg)
        return msg_id

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, predicate, timeout=20.0):
        """The first message (seen before or arriving within ``timeout`` s) that satisfies ``predicate``."""
        for m in self.seen:
            if predicate(m):
                self.seen.remove(m)
                return m
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                m = self.inbox.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                break
            if m is None:
                raise AssertionError(f"the server exited: {self.proc.wait()} {self.proc.stderr.read().decode()[-3000:]}")
            if predicate(m):
                return m
            self.seen.append(m)
        raise AssertionError(f"no such message within {timeout} s; seen: {json.dumps(self.seen)[:2000]}")

    def response(self, msg_id, timeout=20.0):
        return self.wait(lambda m: m.get("id") == msg_id and "method" not in m, timeout)

    def diagnostics(self, uri, timeout=20.0, version=None):
        return self.wait(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
            and (version is None or m["params"].get("version") == version),
            timeout,
        )["params"]["diagnostics"]

    def initialize(self, options=None):
        params = {"processId": None, "rootUri": self.root.as_uri(), "capabilities": {}}
        if options is not None:
            params["initializationOptions"] = options
        assert "result" in self.response(self.request("initialize", params))
        self.notify("initialized", {})

    def open(self, name, text, version=1):
        path = self.root / name
        path.write_text(text)
        uri = path.as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}})
        return uri

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture
def client(tmp_path):
    c = Client(tmp_path)
    c.initialize()
    yield c
    c.close()


def hover(uri, line, character):
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


def test_requests_that_fail_validation_get_errors_with_their_ids(client):
    uri = client.open("m.py", MODEL)
    client.diagnostics(uri)
    rid = client.request("textDocument/hover", hover(uri, -1, 0))
    err = client.response(rid)["error"]
    assert err["code"] == -32602 and "textDocument/hover" in err["message"]
    rid = client.request("textDocument/hover", None, null_params=True)
    assert client.response(rid)["error"]["code"] == -32602
    rid = client.request("textDocument/definitelyNotAMethod", {})
    assert client.response(rid)["error"]["code"] == -32601
    client.send({"jsonrpc": "2.0", "id": 1.5, "method": "textDocument/hover", "params": hover(uri, 0, 0)})
    err = client.wait(lambda m: "error" in m and m.get("id") is None)["error"]
    assert err["code"] == -32600 and "1.5" in err["message"]
    client.send([
        {"jsonrpc": "2.0", "id": 70, "method": "textDocument/hover", "params": hover(uri, 0, 0)},
        {"jsonrpc": "2.0", "method": "$/noSuchNotification", "params": {}},
        {"jsonrpc": "2.0", "id": 71, "method": "shutdown"},
    ])
    batch = client.wait(lambda m: isinstance(m, list))
    assert [(r["id"], r["error"]["code"]) for r in batch] == [(70, -32600), (71, -32600)]
    client.raw(b"Content-Length: 5\r\n\r\n{nope")
    assert client.wait(lambda m: isinstance(m, dict) and m.get("error", {}).get("code") == -32700)
    client.send("a string")
    assert client.wait(lambda m: isinstance(m, dict) and m.get("id") is None and m.get("error", {}).get("code") == -32600)
    # and the server still works
    rid = client.request("textDocument/hover", hover(uri, 0, 0))
    assert "result" in client.response(rid)


def test_notification_methods_sent_as_requests_get_method_not_found(client):
    uri = (client.root / "m.py").as_uri()
    (client.root / "m.py").write_text(MODEL)
    opened = {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": MODEL}}
    for method, params in [
        ("$/cancelRequest", {"id": 5}),
        ("initialized", {}),
        ("textDocument/didOpen", opened),
        ("$/setTrace", {"value": "off"}),
        ("workspace/didChangeConfiguration", {"settings": {}}),
        ("exit", None),
    ]:
        rid = client.request(method, params)
        reply = client.response(rid, timeout=10)
        assert reply["id"] == rid and reply["error"]["code"] == -32601, (method, reply)
        assert method in reply["error"]["message"] and "notification" in reply["error"]["message"]
    assert client.proc.poll() is None  # `exit` with an id is not the exit notification
    # the same methods as notifications still work
    client.notify("textDocument/didOpen", opened)
    assert [d["code"] for d in client.diagnostics(uri)] == ["PTC101"]
    client.notify("$/setTrace", {"value": "off"})
    rid = client.request("textDocument/hover", hover(uri, 0, 0))
    assert "result" in client.response(rid)


def test_bad_content_length_costs_only_that_message(client):
    uri = client.open("m.py", MODEL)
    client.diagnostics(uri)
    body = json.dumps({"jsonrpc": "2.0", "id": 99, "method": "textDocument/hover", "params": hover(uri, 0, 0)}).encode()
    client.raw(b"Content-Length: abc\r\n\r\n" + body)
    err = client.wait(lambda m: isinstance(m, dict) and m.get("error", {}).get("code") == -32700)["error"]
    assert "'abc' is not a number" in err["message"]
    rid = client.request("textDocument/hover", hover(uri, 0, 0))
    assert "result" in client.response(rid, timeout=10)
    client.raw(b"Content-Length: 99999999999999\r\n\r\n" + body)
    err = client.wait(lambda m: isinstance(m, dict) and m.get("error", {}).get("code") == -32700)["error"]
    assert "over the limit" in err["message"]
    rid = client.request("textDocument/hover", hover(uri, 0, 0))
    assert "result" in client.response(rid, timeout=10)
    assert client.proc.poll() is None


def test_requests_after_shutdown_are_refused_and_exit_code_is_zero(client):
    rid = client.request("shutdown", None)
    assert client.response(rid)["result"] is None
    rid = client.request("textDocument/hover", hover((client.root / "m.py").as_uri(), 0, 0))
    err = client.response(rid)["error"]
    assert err["code"] == -32600 and "shut down" in err["message"]
    client.notify("exit", None)
    assert client.proc.wait(timeout=20) == 0


def test_exit_without_shutdown_is_code_one(client):
    client.notify("exit", None)
    assert client.proc.wait(timeout=20) == 1


def test_a_second_initialize_is_refused_and_keeps_the_open_documents(client):
    uri = client.open("m.py", MODEL)
    client.diagnostics(uri)
    reply = client.response(client.request("initialize", {"processId": None, "rootUri": client.root.as_uri(), "capabilities": {}}))
    assert reply["error"]["code"] == -32600, reply
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": MODEL + "# edited\n"}]})
    assert [d["code"] for d in client.diagnostics(uri, version=2)] == ["PTC101"]


def test_two_deep_documents_at_once_do_not_abort_the_server(client):
    deep_brackets = "x = " + "(" * 150 + "1" + ")" * 150 + "\n"
    deep_unary = "y = " + "-" * 2500 + "1\n"
    deep_calls = "import torch\n@torch.compile\ndef f(x):\n    return " + "g(" * 120 + "x.item()" + ")" * 120 + "\n"
    uris = []
    for round_ in range(3):
        for i, text in enumerate((deep_brackets, deep_unary, deep_calls)):
            uris.append(client.open(f"deep{round_}_{i}.py", text))
    for n, uri in enumerate(uris):
        codes = [d["code"] for d in client.diagnostics(uri, timeout=60)]
        if n % 3 == 2:  # analysed on a big stack: the finding 120 calls deep is there
            assert codes == ["PTC101"], codes
    assert client.proc.poll() is None
    rid = client.request("textDocument/hover", hover(uris[0], 0, 0))
    assert "result" in client.response(rid)


def test_slow_documents_are_cut_and_do_not_hold_up_a_small_one(tmp_path):
    c = Client(tmp_path, SLOW_SERVER)
    try:
        c.initialize({"lintTimeout": 8})
        warm = c.open("warm.py", MODEL)  # the first lint imports the analysis
        assert [d["code"] for d in c.diagnostics(warm, timeout=30)] == ["PTC101"]

        def cut_notices():
            return [m for m in c.seen if m.get("method") == "textDocument/publishDiagnostics" and "slow" in m["params"]["uri"]]

        slow = [c.open(f"slow{i}.py", f"# SLOW {i}\n" + MODEL) for i in range(2)]
        time.sleep(0.3)
        small = c.open("small.py", MODEL)
        assert [d["code"] for d in c.diagnostics(small, timeout=7)] == ["PTC101"]
        assert cut_notices() == []  # it came before the slow ones were cut: they did not hold it up
        for uri in slow:
            (notice,) = c.diagnostics(uri, timeout=20)
            assert "cut after 8 s" in notice["message"] and "code" not in notice
        # with every thread taken by a slow document, a small one waits for a free thread, and
        # its own time bound counts from then: it is linted, not cut
        more = [c.open(f"more{i}.py", f"# SLOW {i}\n" + MODEL) for i in range(4)]
        time.sleep(0.5)
        last = c.open("last.py", MODEL)
        assert [d["code"] for d in c.diagnostics(last, timeout=25)] == ["PTC101"]
        for uri in more:
            assert "cut after" in c.diagnostics(uri, timeout=20)[0]["message"]
    finally:
        c.close()


def test_a_newer_change_cancels_the_running_lint_of_the_same_document(tmp_path):
    c = Client(tmp_path, SLOW_SERVER)
    try:
        c.initialize({"lintTimeout": 30})
        warm = c.open("warm.py", MODEL)  # the first lint imports the analysis
        assert [d["code"] for d in c.diagnostics(warm, timeout=30)] == ["PTC101"]
        uris = [c.open(f"doc{i}.py", f"# SLOW {i}\n" + MODEL) for i in range(6)]  # more than the lint threads
        time.sleep(0.5)
        start = time.monotonic()
        for uri in uris:
            c.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"text": MODEL}],
            })
        for uri in uris:
            assert [d["code"] for d in c.diagnostics(uri, timeout=10, version=2)] == ["PTC101"]
        assert time.monotonic() - start < 10  # not the 30 s the slow lints would take
        assert not [m for m in c.seen if m.get("method") == "textDocument/publishDiagnostics" and m["params"].get("version") == 1]
    finally:
        c.close()


def test_incremental_edits_after_a_line_separator_land_on_the_right_line(client):
    text = "import torch\n# a \u2028 b \x0c c\n\n@torch.compile\ndef f(x):\n    return x.sum()\n"
    uri = client.open("m.py", text)
    assert client.diagnostics(uri) == []
    # line 5 (0-based) is `    return x.sum()`: make it `    return x.sum().item()`
    client.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 5, "character": 18}, "end": {"line": 5, "character": 18}}, "text": ".item()"}],
    })
    diags = client.diagnostics(uri, version=2)
    assert [(d["code"], d["range"]["start"]["line"]) for d in diags] == [("PTC101", 5)]
    rid = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": diags[0]["range"], "context": {"diagnostics": diags},
    })
    actions = client.response(rid)["result"]
    suppress = next(a for a in actions if a["title"].startswith("Suppress PTC101"))
    (edit,) = suppress["edit"]["changes"][uri]
    assert edit["range"]["start"]["line"] == 5 and edit["newText"] == "    return x.sum().item()  # noqa: PTC101"


RACE = textwrap.dedent(
    """\
    import sys, threading, time
    from pt2lint.nesting import run_on_big_stack

    at_bottom = threading.Event()
    seen = {}

    def tick():
        return None

    def deep(n):
        if n == 0:
            at_bottom.set()
            end = time.monotonic() + 1.0
            while time.monotonic() < end:
                tick()
                time.sleep(0.005)
            return 0
        return deep(n - 1) + 1

    def quick():
        seen["limit in a"] = sys.getrecursionlimit()
        at_bottom.wait(10)
        time.sleep(0.1)
        return "done"

    def call(fn, *args):
        try:
            run_on_big_stack(fn, *args)
        except RecursionError:
            pass

    limit = sys.getrecursionlimit()
    a = threading.Thread(target=call, args=(quick,))
    a.start()
    time.sleep(0.2)
    b = threading.Thread(target=call, args=(deep, 5000))
    b.start()
    a.join(); b.join()
    print(seen["limit in a"] == limit, sys.getrecursionlimit() == limit)
    """
)


def test_deep_code_on_two_threads_changes_no_process_wide_setting():
    """Two lints on two threads both needing room for deep code: neither may touch the process's
    recursion limit (one thread restoring it while the other is deep is a fatal stack overflow)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    run = subprocess.run([sys.executable, "-c", RACE], capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["True", "True"], run.stdout + run.stderr[-2000:]


def test_message_reader_resyncs_on_the_next_header():
    import asyncio

    from pt2lint.lsp import MessageReader

    good = b'{"jsonrpc": "2.0", "method": "x"}'
    stream = (
        b"Content-Length: abc\r\n\r\n"  # a bad header right before the next message
        + b"Content-Length: %d\r\n\r\n%s" % (len(good), good)
        + b"Content-Length: 999\r\n\r\n" + b"x" * 50  # over the limit, and the body after it is skipped
        + b"Content-Type: application/vscode-jsonrpc\r\ncontent-length: %d\r\n\r\n%s" % (len(good), good)
    )
    chunks = [stream[i:i + 7] for i in range(0, len(stream), 7)]  # headers split across reads

    def read(n):
        return chunks.pop(0) if chunks else b""

    async def bodies():
        reader = MessageReader(read, max_bytes=100)
        out, bad = [], []
        while (body := await reader.next_body(bad.append)) is not None:
            out.append(body)
        return out, bad

    out, bad = asyncio.run(bodies())
    assert out == [good, good]
    assert len(bad) == 2 and "not a number" in bad[0] and "over the limit of 100 bytes" in bad[1]


def test_big_stack_threads_are_started_from_the_main_thread_only():
    from pt2lint.nesting import on_big_stack_thread, start_big_stack_thread

    box = {}

    def from_a_thread():
        try:
            start_big_stack_thread(lambda: None, "x")
        except RuntimeError as exc:
            box["error"] = str(exc)

    t = threading.Thread(target=from_a_thread)
    t.start()
    t.join()
    assert "main thread only" in box["error"]
    assert not on_big_stack_thread()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_requests_on_unopened_files_read_them_bounded_and_never_wait_on_a_fifo(client):
    # a file the client never opened is read from disk as every pt2lint read is: a FIFO is
    # refused at once (a plain open would wait for a writer forever), a regular file is served
    fifo = client.root / "pipe.py"
    os.mkfifo(fifo)
    start = time.monotonic()
    rid = client.request("textDocument/hover", hover(fifo.as_uri(), 0, 10))
    assert client.response(rid, timeout=10)["result"] is None
    rid = client.request("textDocument/codeAction", {
        "textDocument": {"uri": fifo.as_uri()},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": [], "only": ["source.fixAll.pt2lint"]},
    })
    assert client.response(rid, timeout=10)["result"] == []
    assert time.monotonic() - start < 10
    disk = client.root / "disk.py"
    disk.write_text("print(1)  # noqa: PTC301\n")
    rid = client.request("textDocument/hover", hover(disk.as_uri(), 0, 20))
    result = client.response(rid, timeout=10)["result"]
    assert result is not None and "PTC301" in result["contents"]["value"]
