"""LSP requests and notifications of the wrong shape, out of order or for unknown things.

A correct server answers every request (a result, or a JSON-RPC error with the request's id),
ignores bad notifications without dying, and still lints the open document afterwards.
"""

import os
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent.parent / "tests"))
from test_lsp_protocol import MODEL, Client, hover  # noqa: E402

from harness import record, summary  # noqa: E402

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def answered(c, rid, timeout=20):
    r = c.response(rid, timeout)
    assert "result" in r or ("error" in r and isinstance(r["error"].get("code"), int)), r
    return r


def still_lints(c, uri):
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 99}, "contentChanges": [{"text": MODEL + "# x\n"}]})
    d = c.diagnostics(uri, version=99)
    assert any(x.get("code") == "PTC101" for x in d), d


@case
def change_unknown_uri_full_text(c, uri, tmp):
    u = (tmp / "ghost.py").as_uri()
    c.notify("textDocument/didChange", {"textDocument": {"uri": u, "version": 2}, "contentChanges": [{"text": MODEL}]})


@case
def change_contentchanges_not_list(c, uri, tmp):
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": {"text": "x"}})


@case
def change_negative_range(c, uri, tmp):
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
        {"range": {"start": {"line": -1, "character": -5}, "end": {"line": 0, "character": 0}}, "text": "#"}]})


@case
def change_char_past_line_end(c, uri, tmp):
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
        {"range": {"start": {"line": 0, "character": 500}, "end": {"line": 0, "character": 900}}, "text": "  # tail"}]})
    d = c.diagnostics(uri, version=2)
    assert any(x.get("code") == "PTC101" for x in d), d


@case
def change_text_null(c, uri, tmp):
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": None}]})


@case
def change_huge_line_number(c, uri, tmp):
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
        {"range": {"start": {"line": 2 ** 62, "character": 0}, "end": {"line": 2 ** 62, "character": 0}}, "text": "#"}]})


@case
def change_range_mid_surrogate(c, uri, tmp):
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "# \U0001F600\n" + MODEL}]})
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [
        {"range": {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 3}}, "text": "x"}]})
    c.diagnostics(uri, version=3)


@case
def cancel_unknown_id(c, uri, tmp):
    c.notify("$/cancelRequest", {"id": 12345})


@case
def cancel_id_wrong_type(c, uri, tmp):
    c.notify("$/cancelRequest", {"id": {"x": [1]}})


@case
def cancel_no_params(c, uri, tmp):
    c.send({"jsonrpc": "2.0", "method": "$/cancelRequest"})


@case
def cancel_own_finished_request(c, uri, tmp):
    rid = c.request("textDocument/hover", hover(uri, 4, 20)); answered(c, rid)
    c.notify("$/cancelRequest", {"id": rid})


@case
def unknown_request(c, uri, tmp):
    r = answered(c, c.request("pt2lint/nope", {}))
    assert r.get("error", {}).get("code") == -32601, r


@case
def unknown_dollar_notification(c, uri, tmp):
    c.notify("$/somethingNew", {"a": 1})


@case
def hover_past_end(c, uri, tmp):
    answered(c, c.request("textDocument/hover", hover(uri, 10 ** 6, 10 ** 6)))


@case
def hover_unknown_uri_scheme(c, uri, tmp):
    answered(c, c.request("textDocument/hover", hover("vscode-notebook-cell:/x.ipynb#a", 0, 0)))


@case
def hover_directory_uri(c, uri, tmp):
    answered(c, c.request("textDocument/hover", hover(tmp.as_uri(), 0, 0)))


@case
def hover_dev_uri(c, uri, tmp):
    answered(c, c.request("textDocument/hover", hover("file:///dev/urandom", 0, 0)))


@case
def codeaction_range_past_end(c, uri, tmp):
    answered(c, c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {
        "start": {"line": 500, "character": 0}, "end": {"line": 900, "character": 3}}, "context": {"diagnostics": []}}))


@case
def codeaction_forged_diagnostic(c, uri, tmp):
    r = answered(c, c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {
        "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "context": {"diagnostics": [
            {"range": {"start": {"line": 99, "character": 0}, "end": {"line": 99, "character": 1}}, "message": "x", "code": "PTC101", "source": "pt2lint"}]}}))
    for a in r.get("result") or []:
        for edits in ((a.get("edit") or {}).get("changes") or {}).values():
            for e in edits:
                assert e["range"]["start"]["line"] <= 5, f"edit past the end: {e}"


@case
def codeaction_context_missing(c, uri, tmp):
    answered(c, c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {
        "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}}))


@case
def execute_unknown_command(c, uri, tmp):
    answered(c, c.request("workspace/executeCommand", {"command": "pt2lint.nope", "arguments": [1, None]}))


@case
def did_save_unknown(c, uri, tmp):
    c.notify("textDocument/didSave", {"textDocument": {"uri": (tmp / "ghost.py").as_uri()}})


@case
def did_close_unknown(c, uri, tmp):
    c.notify("textDocument/didClose", {"textDocument": {"uri": (tmp / "ghost.py").as_uri()}})


@case
def did_change_configuration_garbage(c, uri, tmp):
    c.notify("workspace/didChangeConfiguration", {"settings": {"pt2lint": {"select": 5, "ignore": [None]}}})


@case
def did_change_watched_garbage(c, uri, tmp):
    c.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": 5, "type": 99}]})


@case
def open_text_not_string(c, uri, tmp):
    c.notify("textDocument/didOpen", {"textDocument": {"uri": (tmp / "n.py").as_uri(), "languageId": "python", "version": 1, "text": 123}})


@case
def open_version_string(c, uri, tmp):
    u = (tmp / "v.py").as_uri()
    c.notify("textDocument/didOpen", {"textDocument": {"uri": u, "languageId": "python", "version": "one", "text": MODEL}})


@case
def open_nul_text(c, uri, tmp):
    u = (tmp / "z.py").as_uri()
    c.notify("textDocument/didOpen", {"textDocument": {"uri": u, "languageId": "python", "version": 1, "text": "x = 1\x00\n"}})
    d = c.diagnostics(u)
    assert any(x.get("code") == "PTC001" for x in d), d


@case
def initialize_twice(c, uri, tmp):
    answered(c, c.request("initialize", {"processId": None, "rootUri": tmp.as_uri(), "capabilities": {}}))


@case
def request_id_string_huge(c, uri, tmp):
    c.send({"jsonrpc": "2.0", "id": "x" * 100000, "method": "textDocument/hover", "params": hover(uri, 0, 0)})
    c.wait(lambda m: m.get("id") == "x" * 100000)


@case
def request_id_negative(c, uri, tmp):
    c.send({"jsonrpc": "2.0", "id": -7, "method": "textDocument/hover", "params": hover(uri, 0, 0)})
    c.wait(lambda m: m.get("id") == -7)


@case
def jsonrpc_version_wrong(c, uri, tmp):
    c.send({"jsonrpc": "1.0", "id": 777, "method": "textDocument/hover", "params": hover(uri, 0, 0)})
    c.wait(lambda m: m.get("id") == 777)


@case
def body_is_number(c, uri, tmp):
    c.raw(b"Content-Length: 1\r\n\r\n5")


@case
def body_invalid_utf8(c, uri, tmp):
    c.raw(b"Content-Length: 4\r\n\r\n\xff\xfe\xfd\xfc")


@case
def content_length_zero(c, uri, tmp):
    c.raw(b"Content-Length: 0\r\n\r\n")


@case
def two_messages_one_write_split_bytes(c, uri, tmp):
    import json
    body = json.dumps({"jsonrpc": "2.0", "id": 555, "method": "textDocument/hover", "params": hover(uri, 4, 20)}).encode()
    frame = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    for i in range(len(frame)):
        c.raw(frame[i:i + 1])
    c.wait(lambda m: m.get("id") == 555)


@case
def shutdown_twice(c, uri, tmp):
    answered(c, c.request("shutdown"))
    answered(c, c.request("shutdown"))
    c.notify("exit", None)
    rc = c.proc.wait(20)
    assert rc == 0, rc
    return "exit 0"


@case
def exit_without_shutdown_while_linting(c, uri, tmp):
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": MODEL * 200}]})
    c.notify("exit", None)
    rc = c.proc.wait(20)
    assert rc == 1, rc
    return "exit 1"


@case
def stdin_closed_mid_message(c, uri, tmp):
    c.raw(b"Content-Length: 100\r\n\r\n{\"jsonrpc\"")
    c.proc.stdin.close()
    rc = c.proc.wait(20)
    assert rc in (0, 1), rc
    return f"exit {rc}"


only = sys.argv[1:]
for fn in CASES:
    if only and fn.__name__ not in only:
        continue
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="c4lsp"))
    c = Client(tmp)
    try:
        c.initialize()
        uri = c.open("m.py", MODEL)
        c.diagnostics(uri)
        note = fn(c, uri, tmp)
        if c.proc.poll() is None:
            still_lints(c, uri)
        record("lsp", fn.__name__, None, note or "")
    except AssertionError as e:
        text = str(e)
        cls = "crash" if "server exited" in text else ("hang" if "no such message" in text else "message")
        record("lsp", fn.__name__, (cls, text[:500]))
    except Exception as e:
        record("lsp", fn.__name__, ("harness", f"{type(e).__name__}: {e}"))
    finally:
        c.close()
summary("lsp.json")
