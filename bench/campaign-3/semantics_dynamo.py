import json, sys, os, importlib.util, warnings
warnings.filterwarnings("ignore")
import torch, torch._dynamo
from cases import CASES
os.makedirs("mods", exist_ok=True)
out = {}
for name, src in CASES.items():
    p = f"mods/{name}.py"; open(p, "w").write(src)
    spec = importlib.util.spec_from_file_location(name, p); m = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(m)
        mod = m.M()
        torch._dynamo.reset()
        e = torch._dynamo.explain(mod)(torch.randn(3))
        out[name] = {"breaks": e.graph_break_count, "graphs": e.graph_count, "reasons": [str(r.reason)[:100] for r in e.break_reasons]}
    except Exception as ex:
        out[name] = {"error": f"{type(ex).__name__}: {str(ex)[:200]}"}
json.dump(out, open("dyn.json", "w"), indent=1)
