import os, subprocess, sys, shutil, ast
HEAD = "import torch\n\n@torch.compile\ndef f(x):\n"
cases = {
 "backslash_cont": HEAD + "    y = x.sum() \\\n        .item()\n    return y\n",
 "backslash_after_item": HEAD + "    y = x.sum().item() + \\\n        1\n    return y\n",
 "item_in_triple_fstring": HEAD + "    s = f'''a\n{x.sum().item()}\nb'''\n    return x\n",
 "cr_only": (HEAD + "    y = x.sum().item()\n    return y\n").replace("\n", "\r"),
 "vt_before": HEAD + "    a = 1\x0b\n    y = x.sum().item()\n    return y\n",
 "item_inside_string_cont": HEAD + "    y = (x.sum().item(), 'a\\\nb')\n    return y\n",
 "item_then_triple": HEAD + "    y = x.sum().item(); s = '''\nz'''\n    return y\n",
 "existing_noqa_other": HEAD + "    y = x.sum().item()  # noqa: E501\n    return y\n",
 "existing_comment": HEAD + "    y = x.sum().item()  # a comment with # hash\n    return y\n",
 "ls_in_comment": HEAD + "    # a\u2028b\n    y = x.sum().item()\n    return y\n",
 "nel_in_string": HEAD + "    s = 'a\u0085b'\n    y = x.sum().item()\n    return y\n",
 "ff_in_string": HEAD + "    s = 'a\x0cb'\n    y = x.sum().item()\n    return y\n",
 "x1d_comment": HEAD + "    # a\x1db\n    y = x.sum().item()\n    return y\n",
 "multi_line_call": HEAD + "    y = torch.add(\n        x.sum().item(),\n        1)\n    return y\n",
 "decorator_noqa": "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n",
 "crlf_mixed_cr": (HEAD + "    y = x.sum().item()\n    return y\n").replace("\n", "\r\n", 3),
 "tabs": HEAD.replace("    ", "\t") + "\ty = x.sum().item()\n\treturn y\n",
 "no_trailing_nl": HEAD + "    return x.sum().item()",
 "trailing_backslash_ws": HEAD + "    y = x.sum().item()\n    return y\n\\\n",
 "item_in_lambda_nested": HEAD + "    g = lambda: (x.sum()\n        .item())\n    return g()\n",
}
os.makedirs("w", exist_ok=True)
bad = 0
for k, src in cases.items():
    p = f"w/{k}.py"
    open(p, "w", newline="").write(src)
    r = subprocess.run([sys.executable, "-m", "pt2lint", "check", "--no-cache", "--isolated", "--add-noqa", p], capture_output=True, text=True)
    new = open(p, newline="").read()
    issues = []
    try:
        a0 = ast.dump(ast.parse(src)); a1 = ast.dump(ast.parse(new))
        if a0 != a1: issues.append("AST changed")
    except SyntaxError as e:
        issues.append(f"no longer parses: {e}")
    r2 = subprocess.run([sys.executable, "-m", "pt2lint", "check", "--no-cache", "--isolated", "-q", p], capture_output=True, text=True)
    if r2.stdout.strip(): issues.append("still findings: " + r2.stdout.strip()[:200])
    if r.returncode not in (0, 1) : issues.append(f"rc {r.returncode} {r.stderr[-300:]}")
    print(k, "OK" if not issues else issues, flush=True)
    if issues:
        bad += 1; print(repr(new))
print("bad", bad, "of", len(cases))
