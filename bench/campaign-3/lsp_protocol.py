import os, sys, json, pathlib, time, tempfile, traceback
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests"))
from test_lsp_protocol import Client, hover, MODEL
results = {}
def alive(c, uri):
    rid = c.request("textDocument/hover", hover(uri, 0, 0))
    r = c.response(rid, timeout=20)
    assert "result" in r or "error" in r, r
def case(fn):
    name = fn.__name__
    tmp = pathlib.Path(tempfile.mkdtemp())
    c = Client(tmp); 
    try:
        c.initialize()
        uri = c.open("m.py", MODEL); c.diagnostics(uri)
        note = fn(c, uri, tmp)
        alive(c, uri)
        results[name] = "ok" + (f" ({note})" if note else "")
    except Exception as e:
        results[name] = "DEFECT " + f"{type(e).__name__}: {str(e)[:400]}"
    finally:
        c.close()
    print(name, results[name], flush=True)

@case
def untitled_scheme(c, uri, tmp):
    c.notify("textDocument/didOpen", {"textDocument": {"uri": "untitled:Untitled-1", "languageId": "python", "version": 1, "text": MODEL}})
    d = c.diagnostics("untitled:Untitled-1")
    rid = c.request("textDocument/codeAction", {"textDocument": {"uri": "untitled:Untitled-1"}, "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 5}}, "context": {"diagnostics": d}})
    r = c.response(rid); assert "result" in r or "error" in r
    return f"{len(d)} diags"
@case
def http_scheme(c, uri, tmp):
    c.notify("textDocument/didOpen", {"textDocument": {"uri": "https://example.com/x.py", "languageId": "python", "version": 1, "text": MODEL}})
    rid = c.request("textDocument/hover", hover("https://example.com/x.py", 4, 20)); r = c.response(rid); return str(r)[:80]
@case
def change_range_past_end(c, uri, tmp):
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {"start": {"line": 100, "character": 5}, "end": {"line": 200, "character": 0}}, "text": "x = 1\n"}]})
    d = c.diagnostics(uri, version=2); return f"{len(d)} diags"
@case
def change_reversed_range(c, uri, tmp):
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {"start": {"line": 4, "character": 10}, "end": {"line": 1, "character": 0}}, "text": "Z"}]})
    d = c.diagnostics(uri, version=2); return f"{len(d)} diags"
@case
def change_unopened(c, uri, tmp):
    u2 = (tmp / "nope.py").as_uri()
    c.notify("textDocument/didChange", {"textDocument": {"uri": u2, "version": 2}, "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "Z"}]})
@case
def open_twice_then_close(c, uri, tmp):
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 5, "text": "x = 1\n"}})
    d = c.diagnostics(uri, version=5); assert d == [], d
    c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
@case
def version_backwards(c, uri, tmp):
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 0}, "contentChanges": [{"text": "x = 1\n"}]})
    time.sleep(1)
@case
def id_object(c, uri, tmp):
    c.send({"jsonrpc": "2.0", "id": {"a": 1}, "method": "textDocument/hover", "params": hover(uri, 0, 0)})
    m = c.wait(lambda m: isinstance(m, dict) and "error" in m and m.get("id") is None); return m["error"]["code"]
@case
def id_bool(c, uri, tmp):
    c.send({"jsonrpc": "2.0", "id": True, "method": "textDocument/hover", "params": hover(uri, 0, 0)})
    m = c.wait(lambda m: isinstance(m, dict) and "error" in m); return (m.get("id"), m["error"]["code"])
@case
def id_huge_int(c, uri, tmp):
    c.send({"jsonrpc": "2.0", "id": 10**40, "method": "textDocument/hover", "params": hover(uri, 0, 0)})
    m = c.wait(lambda m: isinstance(m, dict) and ("error" in m or "result" in m) ); return (str(m.get("id"))[:20], m.get("error", {}).get("code"))
@case
def id_string_weird(c, uri, tmp):
    c.send({"jsonrpc": "2.0", "id": "\ud800x", "method": "textDocument/hover", "params": hover(uri, 0, 0)})
    m = c.wait(lambda m: isinstance(m, dict) and ("error" in m or "result" in m)); return str(m)[:100]
@case
def method_not_string(c, uri, tmp):
    c.send({"jsonrpc": "2.0", "id": 77, "method": 5, "params": {}})
    m = c.wait(lambda m: isinstance(m, dict) and m.get("id") in (77, None) and "error" in m); return m["error"]["code"]
@case
def params_array(c, uri, tmp):
    rid = c.request("textDocument/hover", [uri, 0, 0]); r = c.response(rid); return r.get("error", {}).get("code")
@case
def jsonrpc_missing(c, uri, tmp):
    c.send({"id": 78, "method": "textDocument/hover", "params": hover(uri, 0, 0)})
    m = c.wait(lambda m: isinstance(m, dict) and m.get("id") in (78, None) and ("error" in m or "result" in m)); return str(m)[:100]
@case
def lf_only_headers(c, uri, tmp):
    body = json.dumps({"jsonrpc": "2.0", "id": 79, "method": "textDocument/hover", "params": hover(uri, 0, 0)}).encode()
    c.raw(b"Content-Length: %d\n\n%s" % (len(body), body))
    try:
        m = c.response(79, timeout=5); return "answered"
    except AssertionError:
        return "not answered (LF-only header)"
@case
def leading_zeros_length(c, uri, tmp):
    body = json.dumps({"jsonrpc": "2.0", "id": 80, "method": "textDocument/hover", "params": hover(uri, 0, 0)}).encode()
    c.raw(b"Content-Length: 000%d\r\n\r\n%s" % (len(body), body)); c.response(80, timeout=10)
@case
def negative_length(c, uri, tmp):
    c.raw(b"Content-Length: -5\r\n\r\n{}")
    m = c.wait(lambda m: isinstance(m, dict) and "error" in m, timeout=10); return m["error"]["code"]
@case
def non_utf8_body(c, uri, tmp):
    c.raw(b"Content-Length: 4\r\n\r\n\xff\xfe\xfd\xfc")
    m = c.wait(lambda m: isinstance(m, dict) and "error" in m, timeout=10); return m["error"]["code"]
@case
def trailing_garbage_json(c, uri, tmp):
    body = b'{"jsonrpc": "2.0", "id": 81, "method": "shutdown"} xx'
    c.raw(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    m = c.wait(lambda m: isinstance(m, dict) and ("error" in m), timeout=10); return m["error"]["code"]
@case
def cancel_unknown(c, uri, tmp):
    c.notify("$/cancelRequest", {"id": 12345}); c.notify("$/cancelRequest", {"id": None}); c.notify("$/cancelRequest", None)
@case
def execute_unknown_command(c, uri, tmp):
    rid = c.request("workspace/executeCommand", {"command": "rm -rf /", "arguments": [1]}); r = c.response(rid); return str(r)[:100]
@case
def huge_document(c, uri, tmp):
    text = "import torch\n@torch.compile\ndef f(x):\n    return x.sum().item()\n" + "y = 1\n" * 2_000_000
    c.notify("textDocument/didOpen", {"textDocument": {"uri": (tmp / "big.py").as_uri(), "languageId": "python", "version": 1, "text": text}})
    d = c.diagnostics((tmp / "big.py").as_uri(), timeout=60); return f"{len(d)} diags"
@case
def surrogate_text(c, uri, tmp):
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": MODEL + "# \ud800\n"}]})
    d = c.diagnostics(uri, version=2); return f"{len(d)} diags"
@case
def initialize_twice(c, uri, tmp):
    rid = c.request("initialize", {"processId": None, "rootUri": tmp.as_uri(), "capabilities": {}}); r = c.response(rid); return str(r)[:80]
@case
def codeaction_range_past_end(c, uri, tmp):
    rid = c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {"start": {"line": 400, "character": 0}, "end": {"line": 500, "character": 9}}, "context": {"diagnostics": []}})
    r = c.response(rid); return str(r)[:80]
@case
def codeaction_forged_diag(c, uri, tmp):
    rid = c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 9}}, "context": {"diagnostics": [{"range": {"start": {"line": 999, "character": 0}, "end": {"line": 999, "character": 1}}, "message": "x", "code": "PTC101", "source": "pt2lint"}]}})
    r = c.response(rid); return str(r)[:200]
@case
def hover_huge_position(c, uri, tmp):
    rid = c.request("textDocument/hover", hover(uri, 2**31 - 1, 2**31 - 1)); r = c.response(rid); return str(r)[:80]
@case
def hover_position_overflow(c, uri, tmp):
    rid = c.request("textDocument/hover", hover(uri, 2**40, 0)); r = c.response(rid); return str(r)[:80]
@case
def rapid_open_close_many(c, uri, tmp):
    for i in range(300):
        u = (tmp / f"f{i}.py").as_uri()
        c.notify("textDocument/didOpen", {"textDocument": {"uri": u, "languageId": "python", "version": 1, "text": MODEL}})
        c.notify("textDocument/didClose", {"textDocument": {"uri": u}})
@case
def uri_with_dotdot(c, uri, tmp):
    u = tmp.as_uri() + "/../../../../etc/passwd"
    rid = c.request("textDocument/hover", hover(u, 0, 0)); r = c.response(rid); return str(r)[:120]
@case
def uri_dir(c, uri, tmp):
    rid = c.request("textDocument/hover", hover(tmp.as_uri(), 0, 0)); r = c.response(rid); return str(r)[:120]
@case
def notification_unknown_with_id_null(c, uri, tmp):
    c.send({"jsonrpc": "2.0", "id": None, "method": "textDocument/hover", "params": hover(uri, 0, 0)})
    time.sleep(1)
print(sum(v.startswith("DEFECT") for v in results.values()), "defects of", len(results))
