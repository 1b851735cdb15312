"""Analysis limits and parser agreement.

Limits: each file has one ``.item()`` reached from a compiled function through a shape that
strains the analysis (recursion cycles, many signatures, long decorator chains, deep
expressions). A correct run reports the PTC101, or a PTC004 saying what was not analysed;
never exit 0 in silence, never a crash, within 60 s.

Parser: CPython 3.11's ``compile()`` of the bytes (the judge) against PTC001.
"""

import sys

from harness import fresh, generic, pt, record, summary

H = "import torch\n"
LIMITS = {
    "cycle2": H + "def g(x, n):\n    return h(x, n - 1) if n else x.sum().item()\n"
              "def h(x, n):\n    return g(x, n)\n@torch.compile\ndef f(x):\n    return g(x, 3)\n",
    "cycle3_break_in_third": H + "def a(x, n):\n    return b(x, n)\ndef b(x, n):\n    return c(x, n)\n"
              "def c(x, n):\n    if n:\n        return a(x, n - 1)\n    return x.sum().item()\n@torch.compile\ndef f(x):\n    return a(x, 2)\n",
    "self_recursive_method": H + "class M(torch.nn.Module):\n    def r(self, x, n):\n        if n:\n            return self.r(x, n - 1)\n"
              "        return x.sum().item()\n    def forward(self, x):\n        return self.r(x, 4)\n",
    "recursion_through_lambda": H + "g = lambda x, n: g(x, n - 1) if n else x.sum().item()\n@torch.compile\ndef f(x):\n    return g(x, 2)\n",
    "signatures_12": H + "def h(x, k):\n    return x.sum().item()\n@torch.compile\ndef f(x):\n" + "".join(
        f"    h({v}, {i})\n" for i, v in enumerate(["x", "1", "1.0", "'s'", "None", "[x]", "(x,)", "{1: x}", "x.shape", "x.size(0)", "True", "b'x'"])) + "    return x\n",
    "signatures_last_only_tensor": H + "def h(x):\n    return x.sum().item() if isinstance(x, torch.Tensor) else x\n@torch.compile\ndef f(x):\n" + "".join(
        f"    h({v})\n" for v in ["1", "1.0", "'s'", "None", "[1]", "(1,)", "{1: 2}", "True", "b'x'", "x"]) + "    return x\n",
    "decorators_60": H + "import functools\ndef deco(fn):\n    @functools.wraps(fn)\n    def w(*a, **k):\n        return fn(*a, **k)\n    return w\n"
              + "@torch.compile\n" + "@deco\n" * 60 + "def f(x):\n    return x.sum().item()\n",
    "decorator_factory_chain_30": H + "def deco(n):\n    def d(fn):\n        def w(x):\n            return fn(x)\n        return w\n    return d\n"
              + "@torch.compile\n" + "".join(f"@deco({i})\n" for i in range(30)) + "def f(x):\n    return x.sum().item()\n",
    "nested_defs_40": H + "@torch.compile\ndef f(x):\n" + "".join("    " * (i + 1) + f"def g{i}(x):\n" for i in range(40))
              + "    " * 41 + "return x.sum().item()\n" + "".join("    " * (i + 1) + f"return g{i}(x)\n" for i in reversed(range(40))),
    "deep_parens_90": H + "@torch.compile\ndef f(x):\n    return " + "(" * 90 + "x.sum().item()" + ")" * 90 + "\n",
    "long_binop_3000": H + "@torch.compile\ndef f(x):\n    return " + " + ".join(["x"] * 3000) + " + x.sum().item()\n",
    "long_call_chain_2000": H + "@torch.compile\ndef f(x):\n    return x" + ".abs()" * 2000 + ".item()\n",
    "deep_lambda_nest_50": H + "@torch.compile\ndef f(x):\n    return " + "(lambda y: " * 50 + "y.sum().item()" + ")" * 50 + "(x)" * 50 + "\n",
    "helpers_70_deep": H + "".join(f"def h{i}(x):\n    return h{i + 1}(x)\n" for i in range(70)) + "def h70(x):\n    return x.sum().item()\n"
              "@torch.compile\ndef f(x):\n    return h0(x)\n",
    "deep_subscript_500": H + "@torch.compile\ndef f(x):\n    y = x" + "[0]" * 500 + "\n    return x.sum().item()\n",
    "many_ifs_elif_800": H + "@torch.compile\ndef f(x, n: int):\n    if n == 0:\n        y = 0\n" + "".join(f"    elif n == {i}:\n        y = {i}\n" for i in range(1, 800))
              + "    return x.sum().item() + y\n",
    "mutual_class_recursion": H + "class A(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.b = B()\n"
              "    def forward(self, x, n=2):\n        return self.b(x, n)\nclass B(torch.nn.Module):\n    def forward(self, x, n):\n"
              "        if n:\n            return A.forward(self, x, n - 1)\n        return x.sum().item()\n",
    "generator_recursion": H + "def gen(x, n):\n    if n:\n        yield from gen(x, n - 1)\n    yield x.sum().item()\n@torch.compile\ndef f(x):\n    return list(gen(x, 2))\n",
    "star_args_explosion": H + "def h(*a, **k):\n    return a[0].sum().item()\n@torch.compile\ndef f(x):\n    return h(*[x] * 100, **{f'k{i}': i for i in range(100)})\n",
}

d = fresh("limits")
for name, text in LIMITS.items():
    p = d / f"{name}.py"
    p.write_text(text)
    try:
        compile(text, name, "exec")
    except (SyntaxError, RecursionError, MemoryError) as e:
        LIMITS[name] = None
        record("limits", name, ("harness", f"the case itself does not compile: {e}"))
        continue
    rc, out, err, secs = pt(["check", "--no-cache", p.name], d, timeout=90)
    v = generic(rc, out, err)
    if not v:
        if "PTC101" not in out and "PTC004" not in out and "PTC001" not in out:
            v = ("silent", f"rc={rc}, no PTC101 and no PTC004: {out[-300:]}")
        elif secs > 30:
            v = ("hang", f"{secs:.0f} s")
    record("limits", name, v, f"{secs:.1f}s " + ",".join(sorted({w for w in out.split() if w.startswith('PTC')})))

# parser agreement: CPython 3.11 compile() is the judge
TEXTS = {
    "walrus_rebinds_comp_var": "[x := 1 for x in range(3)]\n",
    "walrus_in_comp_iterable": "[y for y in (z := [1])]\n",
    "type_alias_312": "type X = int\n",
    "generic_def_312": "def f[T](x: T) -> T:\n    return x\n",
    "fstring_backslash_expr_311": "x = f\"{'\\n'.join([])}\"\n",
    "fstring_nested_quotes_312": "x = f\"{f\"{1}\"}\"\n",
    "fstring_too_deep": "x = f'{1:{2:{3:{4}}}}'\n",
    "fstring_empty_expr": "x = f'{}'\n",
    "fstring_bad_conversion": "x = f'{1!z}'\n",
    "fstring_eq_after_conv": "x = f'{1!r=}'\n",
    "nonlocal_module": "nonlocal x\n",
    "nonlocal_unbound": "def f():\n    nonlocal y\n",
    "global_after_use": "def f():\n    x = 1\n    global x\n",
    "param_global": "def f(x):\n    global x\n",
    "yield_module": "x = yield\n",
    "await_module_plain": "await x\n",
    "async_with_outside": "def f():\n    async with x:\n        pass\n",
    "yield_from_async": "async def f():\n    yield from x\n",
    "return_value_async_gen": "async def f():\n    yield 1\n    return 2\n",
    "future_braces": "from __future__ import braces\n",
    "future_unknown": "from __future__ import nope\n",
    "future_late": "x = 1\nfrom __future__ import annotations\n",
    "future_after_docstring_ok": '"""doc"""\nfrom __future__ import annotations\n',
    "starred_alone": "*a = 1\n",
    "two_starred": "a, *b, *c = x\n",
    "kwargs_then_star": "f(**x, *y)\n",
    "genexp_not_alone": "f(x for x in y, 1)\n",
    "default_before_plain": "def f(a=1, b):\n    pass\n",
    "bare_star_kwargs": "def f(*, **k):\n    pass\n",
    "return_class_body": "class C:\n    return 1\n",
    "assign_to_literal": "1 = x\n",
    "assign_debug": "__debug__ = 1\n",
    "param_debug": "def f(__debug__):\n    pass\n",
    "augassign_tuple": "(a, b) += 1\n",
    "del_call": "del f()\n",
    "bytes_str_concat": "x = b'a' 'b'\n",
    "octal_literal_old": "x = 0777\n",
    "underscore_trailing": "x = 1_\n",
    "underscore_double": "x = 1__0\n",
    "binary_bad_digit": "x = 0b2\n",
    "exponent_missing": "x = 1e\n",
    "unicode_escape_range": "x = '\\U0011ffff'\n",
    "unicode_escape_short": "x = '\\U0000'\n",
    "name_escape_unknown": "x = '\\N{NO SUCH CHARACTER NAME}'\n",
    "name_escape_ok": "x = '\\N{LATIN SMALL LETTER A}'\n",
    "bytes_name_escape_ok": "x = b'\\N{x}'\n",
    "raw_hex_ok": "x = r'\\x1'\n",
    "tab_error": "if x:\n        a = 1\n\tb = 2\n",
    "dedent_mismatch": "if x:\n    a = 1\n  b = 2\n",
    "euro_identifier": "\u20ac = 1\n",
    "nfkc_keyword": "\uff44\uff45\uff46 f():\n    pass\n",
    "match_bind_different_names": "match x:\n    case [a] | b:\n        pass\n",
    "match_dup_capture": "match x:\n    case (a, a):\n        pass\n",
    "match_irrefutable_not_last": "match x:\n    case y:\n        pass\n    case 1:\n        pass\n",
    "match_rest_not_last": "match x:\n    case {**r, 'a': 1}:\n        pass\n",
    "match_soft_keyword_name_ok": "match = 1\ncase = 2\n_ = match + case\n",
    "except_star_bare": "try:\n    pass\nexcept*:\n    pass\n",
    "except_star_mixed": "try:\n    pass\nexcept* E:\n    pass\nexcept F:\n    pass\n",
    "break_in_finally_ok": "for i in x:\n    try:\n        pass\n    finally:\n        break\n",
    "continue_outside": "continue\n",
    "await_in_sync_comp": "def f():\n    return [await x for x in y]\n",
    "lambda_yield_ok": "f = lambda: (yield)\n",
    "star_expr_in_index_ok": "x[*a]\n",
    "star_in_return_ok": "def f():\n    return *a, b\n",
    "kw_repeated_call": "f(a=1, a=2)\n",
    "positional_after_kw": "f(a=1, 2)\n",
    "nul_in_string": "x = 'a\x00b'\n",
    "form_feed_mid_indent": "if x:\n  \x0c  a = 1\n",
    "cr_only_line_ends_ok": "x = 1\ry = 2\r",
    "ls_outside_string": "x = 1\u2028y = 2\n",
    "nbsp_as_space": "x =\u00a01\n",
    "zero_width_space": "x\u200b = 1\n",
    "class_keyword_dup": "class C(metaclass=A, metaclass=B):\n    pass\n",
    "annotated_global": "def f():\n    global x\n    x: int = 1\n",
    "annotation_on_nonlocal": "def f():\n    x = 1\n    def g():\n        nonlocal x\n        x: int = 2\n",
    "too_many_nested_blocks_21": "".join("    " * i + "for x in y:\n" for i in range(21)) + "    " * 21 + "pass\n",
    "nested_blocks_20_ok": "".join("    " * i + "for x in y:\n" for i in range(20)) + "    " * 20 + "pass\n",
    "import_star_in_function": "def f():\n    from os import *\n",
    "dict_unpack_in_comp": "{**x for x in y}\n",
    "set_star_unpack_ok": "{*a, *b}\n",
    "walrus_at_statement_level": "x := 1\n",
    "walrus_in_class_comp": "class C:\n    [y := 1 for _ in range(1)]\n",
    "lambda_default_walrus_ok": "f = lambda x=(y := 1): x\n",
    "string_prefix_bad": "x = bu'a'\n",
    "print_statement": "print 'x'\n",
    "exec_statement": "exec 'x'\n",
    "backtick": "x = `1`\n",
    "ellipsis_assign": "... = 1\n",
    "keyword_arg_literal": "f(1=2)\n",
}
pd = fresh("parser")
for i, (name, text) in enumerate(TEXTS.items()):
    (pd / f"p{i:03d}_{name}.py").write_text("import torch\n" + text if False else text, encoding="utf-8")
rc, out, err, _ = pt(["check", "--no-cache", "--select", "PTC001", "."], pd, timeout=300)
g = generic(rc, out, err)
for i, (name, text) in enumerate(TEXTS.items()):
    try:
        compile(text.encode("utf-8"), name, "exec")
        ok = True
    except SyntaxError as e:
        ok = False
    reported = f"p{i:03d}_{name}.py:" in out and any(l.startswith(f"p{i:03d}_{name}.py:") and "PTC001" in l for l in out.splitlines())
    v = g
    if not v:
        if ok and reported:
            v = ("message", "PTC001 on a file CPython accepts")
        elif not ok and not reported:
            v = ("silent", "CPython rejects, no PTC001")
    record("parser", name, v, "rejected" if not ok else "accepted")
summary("limits_parser.json")
