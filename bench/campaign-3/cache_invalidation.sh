set -u
P=${WORK:-/tmp/pt2lint-campaign-3}/cache; rm -rf $P; mkdir -p $P/pkg; cd $P
run() { python -m pt2lint check -q -j1 . 2>&1 | sort; }
cmp_nocache() { a=$(run); b=$(python -m pt2lint check -q -j1 --no-cache . 2>&1 | sort); if [ "$a" != "$b" ]; then echo "DEFECT $1"; echo " cached: $a"; echo " fresh:  $b"; else echo "ok $1"; fi; }
cat > a.py <<'P'
import torch
from pkg.b import helper
@torch.compile
def f(x):
    return helper(x)
P
cat > pkg/__init__.py <<'P'
P
cat > pkg/b.py <<'P'
from pkg.c import deep
def helper(x):
    return deep(x)
P
cat > pkg/c.py <<'P'
def deep(x):
    return x * 2
P
run >/dev/null
cmp_nocache base
cat > pkg/c.py <<'P'
def deep(x):
    return x.sum().item()
P
cmp_nocache transitive_edit
rm pkg/c.py
cmp_nocache dep_deleted
printf 'def deep(x):\n    return x.sum().item()\n' > pkg/c.py
run >/dev/null
mv pkg/c.py pkg/c_old.py; mkdir pkg/c; printf 'def deep(x):\n    return x\n' > pkg/c/__init__.py
cmp_nocache module_becomes_package
rm -rf pkg/c; mv pkg/c_old.py pkg/c.py; run >/dev/null
printf '[tool.pt2lint]\ncapture-scalar-outputs = true\n' > pyproject.toml
cmp_nocache config_knob
rm pyproject.toml; run > /dev/null
printf 'import torch._dynamo\ntorch._dynamo.config.capture_scalar_outputs = True\n' > conf.py
printf 'import conf\n' | cat - a.py > a2.py && mv a2.py a.py
cmp_nocache code_config_other_module
printf 'import torch._dynamo\n' > conf.py
cmp_nocache code_config_removed
# shadow: add pkg/b/__init__ not possible; add a local helper overriding import
printf 'def deep(x):\n    return x\n' > pkg/c.py; run >/dev/null
touch -d '2000-01-01' pkg/c.py
printf 'def deep(x):\n    return x.sum().item()\n' > pkg/c.py; touch -d '2000-01-01' pkg/c.py
cmp_nocache same_mtime_edit
chmod 000 pkg/c.py; cmp_nocache dep_unreadable; chmod 644 pkg/c.py
ln -s c.py pkg/c2.py; cmp_nocache new_symlink
printf 'from pkg.c import *\n' > pkg/b2.py
cat > a.py <<'P'
import torch
from pkg.b2 import deep
@torch.compile
def f(x):
    return deep(x)
P
run >/dev/null
printf 'def deep(x):\n    return x\n' > pkg/c.py
cmp_nocache star_import_edit
