import json
j = json.load(open("judge.json"))
p = json.load(open("pt.json"))
by = {}
for d in p:
    by.setdefault(d["filename"].split("/")[-1], []).append(d)
n = 0
for f, v in sorted(j.items()):
    codes = [d["code"] for d in by.get(f, [])]
    has = "PTC001" in codes
    rej = not v.startswith("ok")
    if has != rej:
        n += 1
        print("MISMATCH", f, v[:80], [ (d["code"], d["message"][:80]) for d in by.get(f, [])])
print(len(j), "cases", n, "mismatches")
