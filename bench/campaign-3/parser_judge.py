import sys, os, json, warnings
out = {}
for f in sorted(os.listdir("cases")):
    data = open("cases/"+f, "rb").read()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(data, f, "exec", dont_inherit=True)
        out[f] = "ok"
    except SyntaxError as e:
        out[f] = "reject: %s" % e.msg
    except Exception as e:
        out[f] = "other: %s %s" % (type(e).__name__, e)
json.dump(out, open("judge.json", "w"), indent=1)
