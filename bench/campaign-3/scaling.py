import time, sys
from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection
S = LintSettings(enabled=resolve_selection())
H = "import torch\nfrom torch import nn\n\n"
def methods(n): return H + "class M(nn.Module):\n" + "".join(f"    def m{i}(self, x):\n        return self.m{i+1}(x) if x.sum() > 0 else x\n" for i in range(n)) + f"    def m{n}(self, x):\n        return x.sum().item()\n    def forward(self, x):\n        return self.m0(x)\n"
def helpers(n): return H + "".join(f"def h{i}(x):\n    return h{i+1}(x) + 1\n" for i in range(n)) + f"def h{n}(x):\n    return x\n@torch.compile\ndef f(x):\n    return h0(x)\n"
def elifs(n): return H + "@torch.compile\ndef f(x, k):\n    if k == 0:\n        y = x\n" + "".join(f"    elif k == {i}:\n        y = x * {i}\n" for i in range(1, n)) + "    else:\n        y = x.sum().item()\n    return y\n"
def handlers(n): return H + "@torch.compile\ndef f(x):\n    try:\n        y = x + 1\n" + "".join(f"    except E{i}:\n        y = x * {i}\n" for i in range(n)) + "    return y\n"
def imports(n): return "".join(f"import mod{i}\nfrom pkg{i} import name{i} as alias{i}\n" for i in range(n)) + H + "@torch.compile\ndef f(x):\n    return x.sum().item()\n"
def selfattrs(n): return H + "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n" + "".join(f"        self.a{i} = nn.Linear(2, 2)\n" for i in range(n)) + "    def forward(self, x):\n" + "".join(f"        x = self.a{i}(x)\n" for i in range(0, n, 10)) + "        return x\n"
def dictlit(n): return H + "@torch.compile\ndef f(x):\n    d = {" + ", ".join(f"'k{i}': x * {i}" for i in range(n)) + "}\n    return d['k1'].sum().item()\n"
def reassign(n): return H + "@torch.compile\ndef f(x):\n" + "".join(f"    y{i} = x if x.sum() > {i} else -x\n" for i in range(n)) + "    return x\n"
def closures(n): return H + "@torch.compile\ndef f(x):\n" + "".join(f"    def g{i}(t):\n        return t * {i}\n    x = g{i}(x)\n" for i in range(n)) + "    return x\n"
def comprehension_nest(n): return H + "@torch.compile\ndef f(x):\n    y = [" + "a0" + "".join(f" for a{i} in range({i+2})" for i in range(n)) + "]\n    return x\n"
def loops_wide(n): return H + "@torch.compile\ndef f(x):\n" + "".join(f"    for i{i} in range(3):\n        x = x + i{i}\n" for i in range(n)) + "    return x\n"
def whiles_nested(n): return H + "@torch.compile\ndef f(x):\n" + "".join("    " * (i + 1) + f"while i{i}:\n" for i in range(n)) + "    " * (n + 1) + "x = x.sum().item()\n    return x\n"
def aug_chain(n): return H + "@torch.compile\ndef f(x):\n    y = x\n" + "".join(f"    y = y[{i % 3}] if y.dim() > 1 else y\n    y += 1\n" for i in range(n)) + "    return y\n"
def classes_inherit(n): return H + "class C0(nn.Module):\n    def forward(self, x):\n        return x.sum().item()\n" + "".join(f"class C{i}(C{i-1}):\n    pass\n" for i in range(1, n)) + f"m = torch.compile(C{n-1}())\n"
cases = [("methods", methods, 100), ("helpers", helpers, 100), ("elifs", elifs, 300), ("handlers", handlers, 300), ("imports", imports, 1000), ("selfattrs", selfattrs, 500), ("dictlit", dictlit, 1000), ("reassign", reassign, 150), ("closures", closures, 150), ("comprehension_nest", comprehension_nest, 10), ("loops_wide", loops_wide, 300), ("whiles_nested", whiles_nested, 9), ("aug_chain", aug_chain, 200), ("classes_inherit", classes_inherit, 150)]
only = sys.argv[1:]
lint_source(H + "@torch.compile\ndef f(x):\n    return x\n", "w.py", S)
for name, gen, n in cases:
    if only and name not in only: continue
    ts = []
    for k in (n, 2 * n):
        src = gen(k)
        t = time.process_time(); r = lint_source(src, "m.py", S); ts.append(time.process_time() - t)
        codes = sorted({d.code for d in r.diagnostics})
    ratio = ts[1] / max(ts[0], 1e-3)
    print(f"{'SUPERLINEAR' if ratio > 3 and ts[1] > 0.5 else 'ok':11} {name:20} n={n}: {ts[0]:.2f}s  2n: {ts[1]:.2f}s  ratio {ratio:.1f} codes {codes}", flush=True)
