import subprocess, sys
forms = {
 "attr": lambda n: "x = a" + ".b" * n + "\n",
 "binop": lambda n: "x = 1" + " + 1" * n + "\n",
 "not": lambda n: "x = " + "not " * n + "1\n",
 "unary": lambda n: "x = " + "-" * n + "1\n",
 "call": lambda n: "x = a" + "()" * n + "\n",
 "and": lambda n: "x = a" + " and a" * n + "\n",
 "cmp": lambda n: "x = a" + " < a" * n + "\n",
 "ifexp": lambda n: "x = " + "a if b else " * n + "c\n",
 "lambda": lambda n: "f = " + "lambda: " * n + "1\n",
 "strcat": lambda n: "x = " + "'a' " * n + "\n",
}
def ok(src):
    r = subprocess.run([sys.executable, "-c", "import sys; compile(sys.stdin.read(), 'm', 'exec')"], input=src, text=True, capture_output=True)
    return r.returncode == 0
res = {}
for name, f in forms.items():
    lo, hi = 1, 1
    while ok(f(hi)):
        lo = hi; hi *= 2
        if hi > 300000: break
    if hi > 300000:
        res[name] = None; print(name, "no limit"); continue
    while hi - lo > 1:
        m = (lo + hi) // 2
        if ok(f(m)): lo = m
        else: hi = m
    res[name] = lo
    print(name, lo, flush=True)
    open(f"{name}_ok.py", "w").write(f(lo))
    open(f"{name}_bad.py", "w").write(f(lo + 1))
