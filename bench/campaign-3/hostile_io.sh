PT2LINT_PYTHON=${PT2LINT_PYTHON:-python}
W=${WORK:-/tmp/pt2lint-campaign-3}/io; R=$W/t; OUT=$W/out; rm -rf $R $OUT; mkdir -p $R $OUT
MODEL='import torch
@torch.compile
def f(x):
    return x.sum().item()
'
n=0; bad=0
t() { # name, timeout, cmd...
  local name=$1 to=$2; shift 2; n=$((n+1))
  ( cd $R/$name && timeout -s KILL $to "$@" > $OUT/$name.out 2> $OUT/$name.err < /dev/null ); rc=$?
  local why=""
  [ $rc -gt 2 ] && why="rc=$rc"
  grep -q "Traceback\|internal error" $OUT/$name.out $OUT/$name.err && why="$why traceback/internal"
  if [ -n "$why" ]; then bad=$((bad+1)); echo "DEFECT $name: $why"; head -c 600 $OUT/$name.err; echo; else echo "ok $name rc=$rc $(head -c 150 $OUT/$name.err | tr '\n' ' ')"; fi
}
mk() { mkdir -p $R/$1; cd $R/$1; }
PT="$PT2LINT_PYTHON -m pt2lint"
# 1 dir symlink loop
mk dirloop; printf "$MODEL" > m.py; mkdir sub; ln -s .. sub/up; ln -s ../sub sub/again
t dirloop 60 $PT check --no-cache .
# 2 dir symlink out of tree
mk dirout; printf "$MODEL" > m.py; mkdir -p $W/outside; printf "$MODEL" > $W/outside/secret.py; ln -s $W/outside ext
t dirout 60 $PT check --no-cache --show-files .
# 3 /proc file named
mk procfile; t procfile 30 $PT check --no-cache /proc/self/status
# 4 /dev/stdin named with closed stdin
mk devstdin; t devstdin 30 $PT check --no-cache /dev/stdin
# 5 socket file in tree
mk sock; printf "$MODEL" > m.py; python -c "import socket; s=socket.socket(socket.AF_UNIX); s.bind('s.py')"
t sock 30 $PT check --no-cache .
# 6 file name with newline
mk nlname; printf "$MODEL" > "$(printf 'a\nb.py')"; t nlname 30 $PT check --no-cache .
# 7 file name invalid utf-8 + json
mk badname; printf "$MODEL" > "$(printf 'x\xff.py')"; t badname 30 $PT check --no-cache --output-format sarif .
# 8 file name starting with dash
mk dash; printf "$MODEL" > ./-q.py; t dash 30 $PT check --no-cache -- -q.py
# 9 very long file name
mk longname; printf "$MODEL" > "$(python -c 'print("a"*250+".py")')"; t longname 30 $PT check --no-cache .
# 10 deep directory tree 300 levels
mk deepdir; p=.; for i in $(seq 1 200); do p=$p/d; done; mkdir -p $p; printf "$MODEL" > $p/m.py; t deepdir 60 $PT check --no-cache .
# 11 pyproject is a directory
mk pyprojdir; printf "$MODEL" > m.py; mkdir pyproject.toml; t pyprojdir 30 $PT check --no-cache .
# 12 pyproject is a FIFO
mk pyprojfifo; printf "$MODEL" > m.py; mkfifo pyproject.toml; t pyprojfifo 30 $PT check --no-cache .
# 13 pyproject symlink to /dev/zero
mk pyprojzero; printf "$MODEL" > m.py; ln -s /dev/zero pyproject.toml; t pyprojzero 30 $PT check --no-cache .
# 14 pt2lint.toml invalid utf8
mk tomlutf8; printf "$MODEL" > m.py; printf '[tool.pt2lint]\nselect = ["\xff"]\n' > pyproject.toml; t tomlutf8 30 $PT check --no-cache .
# 15 config unknown key / wrong types
mk cfgtype; printf "$MODEL" > m.py; printf '[tool.pt2lint]\nselect = 5\n' > pyproject.toml; t cfgtype 30 $PT check --no-cache .
mk cfgtype2; printf "$MODEL" > m.py; printf '[tool.pt2lint]\nper-file-ignores = ["a"]\n' > pyproject.toml; t cfgtype2 30 $PT check --no-cache .
mk cfgtype3; printf "$MODEL" > m.py; printf '[tool.pt2lint]\nmax-file-size = -1\n' > pyproject.toml; t cfgtype3 30 $PT check --no-cache .
mk cfgtype4; printf "$MODEL" > m.py; printf '[tool.pt2lint]\nmax-file-size = 1e400\n' > pyproject.toml; t cfgtype4 30 $PT check --no-cache .
mk cfgtype5; printf "$MODEL" > m.py; printf '[tool.pt2lint]\nsrc = ["\\u0000"]\n' > pyproject.toml; t cfgtype5 30 $PT check --no-cache .
mk cfgtype6; printf "$MODEL" > m.py; printf '[tool.pt2lint]\nfollow-imports = ["../../etc"]\n' > pyproject.toml; t cfgtype6 30 $PT check --no-cache .
mk cfgtype7; printf "$MODEL" > m.py; printf '[tool.pt2lint.per-file-ignores]\n"m.py" = 3\n' > pyproject.toml; t cfgtype7 30 $PT check --no-cache .
mk cfgtype8; printf "$MODEL" > m.py; printf '[tool.pt2lint]\nexclude = ["a/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/b"]\n' > pyproject.toml; t cfgtype8 30 $PT check --no-cache .
mk cfgtype9; printf "$MODEL" > m.py; printf '[tool.pt2lint]\ntarget = "tpu"\n' > pyproject.toml; t cfgtype9 30 $PT check --no-cache .
mk cfgtype10; printf "$MODEL" > m.py; printf '[tool.pt2lint]\nselect = ["PTC1"]\nignore = ["ALL", {a=1}]\n' > pyproject.toml; t cfgtype10 30 $PT check --no-cache .
mk cfgdup; printf "$MODEL" > m.py; printf '[tool.pt2lint]\nselect = ["PTC1"]\nselect = ["PTC2"]\n' > pyproject.toml; t cfgdup 30 $PT check --no-cache .
# 16 --config pointing to dir / fifo / dev
mk cfgarg; printf "$MODEL" > m.py; mkfifo c.toml; t cfgarg 30 $PT check --no-cache --config c.toml .
mk cfgarg2; printf "$MODEL" > m.py; t cfgarg2 30 $PT check --no-cache --config /dev/zero .
# 17 .gitignore huge / binary
mk gibin; printf "$MODEL" > m.py; head -c 200000 /dev/urandom > .gitignore; git init -q . ; t gibin 60 $PT check --no-cache .
# 18 unreadable dir inside tree (as root perms don't apply)
mk unread; printf "$MODEL" > m.py; mkdir priv; printf "$MODEL" > priv/p.py; chmod 000 priv; t unread 30 $PT check --no-cache .
# 19 output file in unwritable location / a directory
mk outdir; printf "$MODEL" > m.py; mkdir o; t outdir 30 $PT check --no-cache -o o .
mk outdev; printf "$MODEL" > m.py; t outdev 30 $PT check --no-cache -o /dev/full .
# 20 baseline file garbage
mk basebad; printf "$MODEL" > m.py; printf '{"a": [' > b.json; t basebad 30 $PT check --no-cache --baseline b.json .
mk basefifo; printf "$MODEL" > m.py; mkfifo b.json; t basefifo 30 $PT check --no-cache --baseline b.json .
mk basezero; printf "$MODEL" > m.py; ln -s /dev/zero b.json; t basezero 30 $PT check --no-cache --baseline b.json .
# 21 stdin variations
mk stdin1; t stdin1 30 sh -c "printf '\xff\xfe' | $PT check --no-cache -"
mk stdin2; t stdin2 30 sh -c "head -c 30000000 /dev/zero | $PT check --no-cache -"
mk stdin3; t stdin3 30 sh -c "printf '$MODEL' | $PT check --no-cache --stdin-filename '../../x\n.py' -"
mk stdin4; t stdin4 30 sh -c "printf '$MODEL' | $PT fix --no-cache -"
mk stdin5; t stdin5 30 sh -c "printf '$MODEL' | $PT check --no-cache - - "
# 22 path args: nonexistent, empty string
mk args1; t args1 30 $PT check --no-cache ''
mk args2; t args2 30 $PT check --no-cache nope.py
# 23 cache dir options
mk cdir1; printf "$MODEL" > m.py; t cdir1 30 $PT check --cache-dir /dev/null .
mk cdir2; printf "$MODEL" > m.py; touch cfile; t cdir2 30 $PT check --cache-dir cfile .
mk cdir3; printf "$MODEL" > m.py; t cdir3 30 env PT2LINT_CACHE_DIR=/proc/self $PT check .
# 24 fix through hardlink to outside
mk hardlink; printf 'import torch\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n' > $W/outside/h.py; ln $W/outside/h.py h.py; t hardlink 30 $PT fix --no-cache --unsafe-fixes .
echo "cases $n defects $bad"
