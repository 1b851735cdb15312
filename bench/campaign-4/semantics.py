"""Silent results of the analysis, judged by Dynamo (torch 2.13, torch._dynamo.explain).

Each module defines ``f`` (compiled); a case is a defect when pt2lint and Dynamo disagree
about whether ``f`` breaks the graph (a miss is a silent wrong result; a finding on a
module Dynamo traces whole is a false positive).  Near misses are included.
"""

import json
import subprocess
import sys

from harness import REPO, fresh, generic, pt, record, summary

H = "import torch\nimport operator, functools\n"
CASES = {
    "fullwidth_method_name": H + "@torch.compile\ndef f(x):\n    return x.sum().\uff49\uff54\uff45\uff4d()\n",
    "fullwidth_torch_module": H + "@torch.compile\ndef f(x):\n    return \uff54orch.ones(1) + x.sum().item()\n",
    "getattribute_item": H + "@torch.compile\ndef f(x):\n    return x.sum().__getattribute__('item')()\n",
    "getattr_concat_name": H + "@torch.compile\ndef f(x):\n    return getattr(x.sum(), 'it' + 'em')()\n",
    "getattr_default_item": H + "@torch.compile\ndef f(x):\n    return getattr(x.sum(), 'item', None)()\n",
    "attrgetter_item": H + "@torch.compile\ndef f(x):\n    return operator.attrgetter('item')(x.sum())()\n",
    "tensor_dict_item": H + "@torch.compile\ndef f(x):\n    return torch.Tensor.__dict__['item'](x.sum())\n",
    "method_alias_local": H + "@torch.compile\ndef f(x):\n    m = x.sum().item\n    return m()\n",
    "method_in_tuple": H + "@torch.compile\ndef f(x):\n    fs = (x.sum().item,)\n    return fs[0]()\n",
    "method_through_dict": H + "@torch.compile\ndef f(x):\n    fs = {'a': x.sum().tolist}\n    return fs['a']()\n",
    "int_of_tensor_via_index": H + "@torch.compile\ndef f(x):\n    return x * operator.index(x.sum().long())\n",
    "bool_in_while": H + "@torch.compile\ndef f(x):\n    while x.sum() > 100:\n        x = x / 2\n    return x\n",
    "format_of_tensor": H + "@torch.compile\ndef f(x):\n    return x, format(x.sum(), '.2f')\n",
    "len_of_nonzero": H + "@torch.compile\ndef f(x):\n    return x * len(x.nonzero())\n",
    "math_floor_tensor": H + "import math\n@torch.compile\ndef f(x):\n    return x * math.floor(x.sum())\n",
    "range_of_tensor": H + "@torch.compile\ndef f(x):\n    return [x for _ in range(x.sum().int())]\n",
    "forward_assigned_later_in_body": H + "class M(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n    def other(self, x):\n        return x * x.sum().item()\n    forward = other\n"
        "_m = M()\n@torch.compile\ndef f(x):\n    return _m(x)\n",
    "forward_deleted_then_redefined": H + "class M(torch.nn.Module):\n    def forward(self, x):\n        return x * x.sum().item()\n    del forward\n    def forward(self, x):\n        return x * 2\n"
        "_m = M()\n@torch.compile\ndef f(x):\n    return _m(x)\n",
    "near_item_on_python_number": H + "@torch.compile\ndef f(x):\n    n = x.shape[0]\n    return x * n\n",
    "near_getattr_shape": H + "@torch.compile\ndef f(x):\n    return x * getattr(x, 'shape')[0]\n",
    "near_methodcaller_add": H + "@torch.compile\ndef f(x):\n    return operator.methodcaller('add', 1)(x)\n",
    "near_tensor_dict_add": H + "@torch.compile\ndef f(x):\n    return torch.Tensor.__dict__['add'](x, 1)\n",
    "near_while_python_counter": H + "@torch.compile\ndef f(x):\n    i = 0\n    while i < 3:\n        x = x + 1\n        i += 1\n    return x\n",
    "near_recursion_clean": H + "def g(x, n):\n    return g(x * 2, n - 1) if n else x\n@torch.compile\ndef f(x):\n    return g(x, 3)\n",
    "near_recursion_dead_branch": H + "def g(x, mode):\n    if mode == 'a':\n        return g(x, 'b')\n    if mode == 'debug':\n        return x.sum().item()\n    return x\n@torch.compile\ndef f(x):\n    return g(x, 'a')\n",
}

d = fresh("semantics")
for name, text in CASES.items():
    (d / f"{name}.py").write_text(text)
JUDGE = r'''
import sys, json, importlib.util, torch, torch._dynamo as dyn
out = {}
for path in sys.argv[1:]:
    try:
        spec = importlib.util.spec_from_file_location("m", path); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
        fn = getattr(m.f, "_torchdynamo_orig_callable", m.f)
        dyn.reset()
        e = dyn.explain(fn)(torch.ones(3))
        out[path] = {"breaks": len(e.break_reasons), "graphs": e.graph_count, "why": [str(b.reason).splitlines()[0][:100] for b in e.break_reasons]}
    except Exception as exc:
        out[path] = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
print(json.dumps(out))
'''
paths = [str(d / f"{n}.py") for n in CASES]
judge = subprocess.run([sys.executable, "-c", JUDGE, *paths], capture_output=True, text=True, timeout=900)
truth = json.loads(judge.stdout.strip().splitlines()[-1])
rc, out, err, _ = pt(["check", "--no-cache", "--output-format", "json", "--ignore", "PTC002,PTC004", "."], d, timeout=300)
g = generic(rc, out, err)
found = {}
if not g:
    for f in json.loads(out):
        found.setdefault(f["filename"].rsplit("/", 1)[-1][:-3], []).append(f["code"])
for name in CASES:
    t = truth[str(d / f"{name}.py")]
    mine = found.get(name, [])
    v = g
    if not v and "error" in t:
        v = ("harness", t["error"])
    elif not v:
        breaks = t["breaks"] > 0
        if breaks and not mine:
            v = ("silent", f"Dynamo breaks ({t['why'][:1]}); no finding")
        elif not breaks and mine:
            v = ("message", f"false positive {mine}: Dynamo traces one graph")
    record("semantics", name, v, f"dynamo {t.get('breaks')} / pt2lint {mine}")
summary("semantics.json")
