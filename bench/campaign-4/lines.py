"""Line model: reported lines, --add-noqa and fix/--diff against CPython's own line numbers.

Each file puts one odd character (a Unicode or ASCII line break CPython does not count, a
lone CR, a form feed, a vertical tab...) in a comment, a string, a triple-quoted string or a
docstring, with LF or CRLF line ends and with or without a BOM. Judges: ``ast`` for the
line of ``.item()`` (CPython's line model), the AST before and after ``--add-noqa`` (a comment
must not change it), and a second ``check`` after ``--add-noqa`` (nothing left, no PTC002).
"""

import ast
import json
import re
import sys

from harness import fresh, generic, pt, record, summary

SEPS = {"cr": "\r", "vt": "\x0b", "ff": "\x0c", "fs": "\x1c", "gs": "\x1d", "rs": "\x1e", "nel": "\x85",
        "ls": "\u2028", "ps": "\u2029", "crlf": "\r\n"}


def body(sep, place):
    pre = {"comment": f"# a{sep}b\n", "string": f"s = 'a{sep}b'\n", "triple": f's = """a{sep}b\n"""\n', "doc": ""}[place]
    doc = f'    """doc{sep}more"""\n' if place == "doc" else ""
    return f"import torch\n{pre}\n@torch.compile\ndef f(x):\n{doc}    y = 1\n    return x.sum().item()\n"


cases = []
for sname, sep in SEPS.items():
    for place in ("comment", "string", "triple", "doc"):
        cases.append((f"{sname}-{place}-lf", body(sep, place), False, "\n"))
    cases.append((f"{sname}-comment-crlf-bom", body(sep, "comment"), True, "\r\n"))
    cases.append((f"{sname}-triple-bom", body(sep, "triple"), True, "\n"))
# the whole file with CR ends, and a BOM followed by a form feed line
cases.append(("all-cr", body("", "comment"), False, "\r"))
cases.append(("bom-ff-first", "\x0c\n" + body("", "comment"), True, "\n"))
cases.append(("bom-ls-first-comment", "#\u2028\n" + body("", "comment"), True, "\n"))

d = fresh("lines")
expect = {}
for name, text, bom, nl in cases:
    text = text.replace("\n", nl) if nl != "\n" else text
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    (d / f"{name.replace('-', '_')}.py").write_bytes(data)
    try:
        tree = ast.parse(data)
        line = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "item"][0]
        expect[name] = ("ok", line, ast.dump(tree))
    except SyntaxError as e:
        expect[name] = ("syntax", e.lineno, None)

rc, out, err, _ = pt(["check", "--no-cache", "--output-format", "json", "."], d, timeout=120)
g = generic(rc, out, err)
got = {}
if not g:
    for f in json.loads(out):
        got.setdefault(f["filename"].rsplit("/", 1)[-1][:-3], []).append((f["location"]["row"], f["code"]))
before = {p.name: p.read_bytes() for p in d.glob("*.py")}
rc2, out2, err2, _ = pt(["check", "--no-cache", "--add-noqa", "."], d, timeout=120)
g2 = generic(rc2, out2, err2)
rc3, out3, err3, _ = pt(["check", "--no-cache", "--output-format", "json", "."], d, timeout=120)
after = {}
if not generic(rc3, out3, err3):
    for f in json.loads(out3):
        after.setdefault(f["filename"].rsplit("/", 1)[-1][:-3], []).append((f["location"]["row"], f["code"]))

for name, *_ in cases:
    key = name.replace("-", "_")
    kind, line, dump = expect[name]
    verdict = g or g2
    if not verdict:
        found = got.get(key, [])
        if kind == "syntax":
            if not any(c == "PTC001" for _, c in found):
                verdict = ("silent", f"CPython rejects (line {line}); pt2lint: {found}")
        elif (line, "PTC101") not in found:
            verdict = ("silent", f"PTC101 expected on line {line}; got {found}")
        else:
            new = (d / f"{key}.py").read_bytes()
            try:
                new_dump = ast.dump(ast.parse(new))
            except SyntaxError as e:
                new_dump = f"SyntaxError {e}"
            stripped = re.sub(rb"  # noqa: PTC101", b"", new)
            if new_dump != dump:
                verdict = ("silent", "--add-noqa changed the program (AST differs)")
            elif stripped != before[f"{key}.py"]:
                verdict = ("silent", f"--add-noqa changed other bytes: {new[:200]!r}")
            elif after.get(key):
                verdict = ("silent", f"after --add-noqa still: {after.get(key)}")
    record("lines", name, verdict, f"line {line}")

# fix and --diff on mixed line endings, tabs and form feeds (the safe guard fix of a print)
FIXSRC = {
    "mixed-crlf-first": b"import torch\r\n\r\n@torch.compile\ndef f(x):\n    print('step')\n    return x + 1\n",
    "mixed-lf-first": b"import torch\n\n@torch.compile\r\ndef f(x):\r\n    print('step')\r\n    return x + 1\r\n",
    "tabs": b"import torch\n\n@torch.compile\ndef f(x):\n\tprint('step')\n\treturn x + 1\n",
    "tabs-crlf": b"import torch\r\n\r\n@torch.compile\r\ndef f(x):\r\n\tprint('step')\r\n\treturn x + 1\r\n",
    "ff-before-def": b"import torch\n\x0c\n@torch.compile\ndef f(x):\n    print('step')\n    return x + 1\n",
    "ff-indent": b"import torch\n\n@torch.compile\ndef f(x):\n\x0c    print('step')\n    return x + 1\n",
    "cr-only": b"import torch\r\r@torch.compile\rdef f(x):\r    print('step')\r    return x + 1\r",
    "ls-in-comment": "import torch\n# a\u2028b\n@torch.compile\ndef f(x):\n    print('step')  # c\u2028d\n    return x + 1\n".encode(),
    "no-final-newline": b"import torch\n\n@torch.compile\ndef f(x):\n    print('step')",
    "bom-crlf": b"\xef\xbb\xbfimport torch\r\n\r\n@torch.compile\r\ndef f(x):\r\n    print('step')\r\n    return x + 1\r\n",
    "semicolons": b"import torch\n\n@torch.compile\ndef f(x):\n    y = x; print('step'); return y + 1\n",
    "backslash-cont": b"import torch\n\n@torch.compile\ndef f(x):\n    print(\\\n'step')\n    return x + 1\n",
    "tab-space-mix-ok": b"import torch\n\n@torch.compile\ndef f(x):\n    if x.dim():\n\tprint('step')\n    return x + 1\n",
}
fd = fresh("fixlines")
for name, data in FIXSRC.items():
    (fd / f"{name.replace('-', '_')}.py").write_bytes(data)
for name, data in FIXSRC.items():
    p = fd / f"{name.replace('-', '_')}.py"
    try:
        compile(data, "x", "exec")
        valid = True
    except SyntaxError:
        valid = False
    rc, out, err, _ = pt(["fix", "--no-cache", "--diff", p.name], fd)
    verdict = generic(rc, out, err)
    if not verdict and p.read_bytes() != data:
        verdict = ("silent", "--diff wrote the file")
    if not verdict:
        rc, out, err, _ = pt(["fix", "--no-cache", p.name], fd)
        verdict = generic(rc, out, err)
        if not verdict and rc == 2 and valid:
            verdict = ("message", f"fix failed on valid code: {(err + out)[:300]}")
    if not verdict:
        new = p.read_bytes()
        if not valid:
            if new != data:
                verdict = ("silent", "fix rewrote a file CPython rejects")
        else:
            try:
                compile(new, "x", "exec")
            except SyntaxError as e:
                verdict = ("silent", f"fix made a syntax error: {e} {new!r}")
            if not verdict:
                old_lines, new_lines = data.splitlines(keepends=True), new.splitlines(keepends=True)
                ends = {l[len(l.rstrip(b'\r\n')):] for l in old_lines}
                for l in new_lines:
                    if l not in old_lines and len(ends) == 1 and l[len(l.rstrip(b'\r\n')):] not in ends | {b""}:
                        verdict = ("message", f"inserted line end differs from the file's: {l!r}")
                        break
            if not verdict:
                rc, out, err, _ = pt(["check", "--no-cache", "--select", "PTC301", p.name], fd)
                if rc != 0 and "PTC301" in out and "fix available]" in out:
                    verdict = ("message", f"fix left the print: {out[:200]}")
    record("fixlines", name, verdict, "")

summary("lines.json")
