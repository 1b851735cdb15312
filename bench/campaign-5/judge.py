"""Judge each case of cases.py (or of the module named as the argument, `python judge.py cases2`) with Dynamo: the graphs a counting backend receives on one call
(run with TORCH_LOGS=graph_breaks: the log names the breaking line, which the count misses
when little is left after the break)."""
import sys, json, torch, torch._dynamo as D
sys.path.insert(0, ".")
CASES = __import__(sys.argv[1] if len(sys.argv) > 1 else "cases").CASES
out = {}
for n, src in CASES.items():
    ns = {}
    exec(compile(src, n, "exec"), ns)
    cnt = {"n": 0}
    def be(gm, ex):
        cnt["n"] += 1; return gm
    D.reset()
    try:
        torch.compile(ns["f"], backend=be)(torch.tensor([1., 0., 2., 3.]))
        out[n] = cnt["n"]
    except Exception as e:
        out[n] = f"ERR {type(e).__name__}: {str(e)[:80]}"
print(json.dumps(out))
