"""Special files, the tree boundary, cache corruption and config errors.

Each case sets up a directory under $WORK/pt2lint-campaign-4/io, runs ``check`` (or ``fix``),
and states what a correct run does: the graph break in m.py still reported (exit 1), or a
clear ``error:`` line naming the thing (exit 2), never a hang, a traceback or silence.
"""

import json
import os
import pathlib
import socket
import subprocess
import sys

from harness import MODEL, WORK, fresh, generic, pt, record, summary

CASES = []


def case(family):
    def deco(fn):
        CASES.append((family, fn))
        return fn
    return deco


def expect_finding(rc, out, err, what="m.py"):
    if rc != 1 or "PTC101" not in out:
        return ("silent", f"expected the PTC101 in {what}, rc={rc}: {out[-200:]} {err[-300:]}")


def expect_error(rc, out, err, *words):
    if rc != 2 or "error:" not in err + out:
        return ("message", f"expected an error line, rc={rc}: {(err + out)[-300:]}")
    for w in words:
        if w.lower() not in (err + out).lower():
            return ("message", f"error does not name {w!r}: {(err + out)[-300:]}")


def model(d, name="m.py"):
    (d / name).write_text(MODEL)


# ---- special files ---------------------------------------------------------------------
@case("special")
def socket_named(d):
    model(d)
    s = socket.socket(socket.AF_UNIX); s.bind(str(d / "s.py"))
    r = pt(["check", "--no-cache", "s.py", "m.py"], d)
    s.close()
    return generic(*r[:3]) or expect_error(*r[:3], "s.py")


@case("special")
def proc_maps_named(d):
    r = pt(["check", "--no-cache", "/proc/self/maps"], d)
    return generic(*r[:3]) or (None if r[0] in (1, 2) else ("message", f"rc={r[0]} {r[2][-200:]}"))


@case("special")
def proc_cmdline_via_py_link(d):
    model(d); os.symlink("/proc/self/cmdline", d / "c.py")
    r = pt(["check", "--no-cache", "."], d)
    return generic(*r[:3]) or expect_finding(*r[:3])


@case("special")
def proc_kmsg_link_in_tree(d):
    model(d); os.symlink("/proc/kmsg", d / "k.py")  # blocks on read
    r = pt(["check", "--no-cache", "."], d, timeout=40)
    return generic(*r[:3]) or expect_finding(*r[:3])


@case("special")
def dir_named_x_py_walked(d):
    model(d); (d / "x.py").mkdir(); model(d / "x.py", "inner.py")
    r = pt(["check", "--no-cache", "."], d)
    g = generic(*r[:3]) or expect_finding(*r[:3])
    if not g and "x.py/inner.py" not in r[1]:
        return ("silent", f"x.py/inner.py not checked: {r[1][-300:]}")
    return g


@case("special")
def dir_named_x_py_named(d):
    (d / "x.py").mkdir(); model(d / "x.py", "inner.py")
    r = pt(["check", "--no-cache", "x.py"], d)
    return generic(*r[:3]) or expect_finding(*r[:3], "x.py/inner.py")


@case("special")
def broken_symlink_named(d):
    model(d); os.symlink("nope.py", d / "b.py")
    r = pt(["check", "--no-cache", "b.py", "m.py"], d)
    return generic(*r[:3]) or expect_error(*r[:3], "b.py")


@case("special")
def broken_symlink_in_tree(d):
    model(d); os.symlink("nope.py", d / "b.py")
    r = pt(["check", "--no-cache", "."], d)
    return generic(*r[:3]) or expect_finding(*r[:3])


@case("special")
def self_symlink_named(d):
    model(d); os.symlink("a.py", d / "a.py")
    r = pt(["check", "--no-cache", "a.py", "m.py"], d)
    return generic(*r[:3]) or expect_error(*r[:3], "a.py")


@case("special")
def symlink_loop_pair_in_tree(d):
    model(d); os.symlink("b.py", d / "a.py"); os.symlink("a.py", d / "b.py")
    r = pt(["check", "--no-cache", "."], d)
    return generic(*r[:3]) or expect_finding(*r[:3])


@case("special")
def dev_urandom_named(d):
    r = pt(["check", "--no-cache", "/dev/urandom"], d, timeout=40)
    return generic(*r[:3]) or expect_error(*r[:3])


@case("special")
def dev_null_named(d):
    r = pt(["check", "--no-cache", "/dev/null"], d)
    return generic(*r[:3]) or (None if r[0] in (0, 2) else ("message", f"rc={r[0]}"))


@case("special")
def stdin_is_directory(d):
    fd = os.open(str(d), os.O_RDONLY)
    r = pt(["check", "--no-cache", "-"], d, stdin=fd)
    os.close(fd)
    return generic(*r[:3]) or expect_error(*r[:3])


@case("special")
def stdin_is_dev_zero(d):
    with open("/dev/zero", "rb") as f:
        r = pt(["check", "--no-cache", "-"], d, stdin=f, timeout=60)
    return generic(*r[:3]) or expect_error(*r[:3])


@case("special")
def stdin_is_socket(d):
    a, b = socket.socketpair()
    b.sendall(MODEL.encode()); b.shutdown(socket.SHUT_WR)
    r = pt(["check", "--no-cache", "-"], d, stdin=a.fileno())
    a.close(); b.close()
    return generic(*r[:3]) or expect_finding(*r[:3], "stdin")


@case("special")
def file_with_trailing_slash(d):
    model(d)
    r = pt(["check", "--no-cache", "m.py/"], d)
    return generic(*r[:3]) or expect_error(*r[:3], "m.py")


@case("special")
def path_too_long(d):
    r = pt(["check", "--no-cache", "a" * 5000 + ".py"], d)
    return generic(*r[:3]) or expect_error(*r[:3])


@case("special")
def name_component_too_long(d):
    r = pt(["check", "--no-cache", "a" * 300 + ".py"], d)
    return generic(*r[:3]) or expect_error(*r[:3])


@case("special")
def fifo_named_py_in_tree_fix(d):
    model(d); os.mkfifo(d / "p.py")
    r = pt(["fix", "--no-cache", "."], d, timeout=40)
    return generic(*r[:3])


@case("special")
def socket_as_gitignore(d):
    model(d); subprocess.run(["git", "init", "-q", str(d)])
    s = socket.socket(socket.AF_UNIX); s.bind(str(d / ".gitignore"))
    r = pt(["check", "--no-cache", "."], d)
    s.close()
    return generic(*r[:3]) or (None if r[0] in (1, 2) else ("silent", f"rc={r[0]}"))


@case("special")
def dir_as_pt2lint_toml(d):
    model(d); (d / ".pt2lint.toml").mkdir()
    r = pt(["check", "--no-cache", "."], d)
    return generic(*r[:3]) or (None if r[0] in (1, 2) else ("silent", f"rc={r[0]}"))


@case("special")
def output_to_socket(d):
    model(d)
    s = socket.socket(socket.AF_UNIX); s.bind(str(d / "o.sock"))
    r = pt(["check", "--no-cache", "-o", "o.sock", "m.py"], d)
    s.close()
    return generic(*r[:3]) or expect_error(*r[:3], "o.sock")


@case("special")
def output_into_missing_dir(d):
    model(d)
    r = pt(["check", "--no-cache", "-o", "no/such/o.txt", "m.py"], d)
    return generic(*r[:3]) or expect_error(*r[:3])


@case("special")
def stdin_filename_dir(d):
    (d / "sub").mkdir()
    r = pt(["check", "--no-cache", "--stdin-filename", "sub", "-"], d, input=MODEL.encode())
    return generic(*r[:3]) or expect_finding(*r[:3])


@case("special")
def named_twice(d):
    model(d)
    r = pt(["check", "--no-cache", "m.py", "./m.py", str(d / "m.py")], d)
    g = generic(*r[:3]) or expect_finding(*r[:3])
    if not g and r[1].count("PTC101") != 1:
        return ("message", f"one file reported {r[1].count('PTC101')} times")
    return g


@case("special")
def symlink_dir_inside_tree_twice(d):
    (d / "pkg").mkdir(); model(d / "pkg"); os.symlink("pkg", d / "alias")
    r = pt(["check", "--no-cache", "."], d)
    g = generic(*r[:3]) or expect_finding(*r[:3])
    if not g and r[1].count("PTC101") != 1:
        return ("message", f"the same file reported {r[1].count('PTC101')} times through a link")
    return g


# ---- cache corruption ------------------------------------------------------------------
def cached(d):
    model(d)
    r = pt(["check", "."], d)
    entries = [p for p in (d / ".pt2lint_cache").rglob("*.json")]
    return r, entries


def cache_case(mutate):
    def fn(d):
        import shutil
        shutil.rmtree(WORK / "secret", ignore_errors=True)
        r, entries = cached(d)
        if r[0] != 1 or not entries:
            return ("message", f"first run: rc={r[0]} entries={len(entries)} {r[2][-200:]}")
        mutate(d, entries)
        r = pt(["check", "."], d, timeout=60)
        return generic(*r[:3]) or expect_finding(*r[:3])
    fn.__name__ = mutate.__name__
    return fn


def _trunc_half(d, es):
    for e in es: b = e.read_bytes(); e.write_bytes(b[: len(b) // 2])
def _trunc_zero(d, es):
    for e in es: e.write_bytes(b"")
def _huge_sparse(d, es):
    for e in es: os.truncate(e, 3 << 30)
def _huge_valid_prefix(d, es):
    for e in es: e.write_bytes(e.read_bytes() + b" " * (40 << 20))
def _entry_link_dev_zero(d, es):
    for e in es: e.unlink(); os.symlink("/dev/zero", e)
def _entry_fifo(d, es):
    for e in es: e.unlink(); os.mkfifo(e)
def _entry_dir(d, es):
    for e in es: e.unlink(); e.mkdir()
def _entry_socket(d, es):
    global _socks
    _socks = []
    for e in es:
        e.unlink(); s = socket.socket(socket.AF_UNIX); here = os.getcwd(); os.chdir(e.parent)
        s.bind(e.name); os.chdir(here); _socks.append(s)
def _shard_dir_symlink(d, es):
    import shutil
    for e in es:
        shard = e.parent; target = d / "elsewhere"; shutil.move(str(shard), str(target)); os.symlink(target, shard)
def _version_dir_symlink(d, es):
    import shutil
    v = es[0].parent.parent; target = d / "elsewhere"; shutil.move(str(v), str(target)); os.symlink(target, v)
def _entry_symlink_to_other_entry(d, es):
    other = d / "other.json"; other.write_text(es[0].read_text())
    for e in es: e.unlink(); os.symlink(other, e)
def _schema_version_bumped(d, es):
    for e in es:
        data = json.loads(e.read_text())
        if isinstance(data, dict):
            for k in list(data):
                if "version" in k or "schema" in k:
                    data[k] = 999
            data["schema"] = 999
        e.write_text(json.dumps(data))
def _deep_json(d, es):
    for e in es: e.write_text("[" * 200000 + "]" * 200000)
def _nan_json(d, es):
    for e in es: e.write_text(e.read_text().replace("[", "[NaN, ", 1))
def _invalid_utf8(d, es):
    for e in es: e.write_bytes(b"\xff\xfe" + e.read_bytes())
def _duplicate_keys(d, es):
    for e in es:
        t = e.read_text().strip()
        if t.startswith("{"): e.write_text('{"diagnostics": [], ' + t[1:])
def _cachedir_tag_removed(d, es):
    for t in (d / ".pt2lint_cache").rglob("CACHEDIR.TAG"): t.unlink()
def _cache_root_is_file(d, es):
    import shutil
    shutil.rmtree(d / ".pt2lint_cache"); (d / ".pt2lint_cache").write_text("x")
def _version_dir_is_file(d, es):
    import shutil
    v = es[0].parent.parent; shutil.rmtree(v); v.write_text("x")
def _shard_is_fifo(d, es):
    import shutil
    sh = es[0].parent; shutil.rmtree(sh); os.mkfifo(sh)
def _entry_bom(d, es):
    for e in es: e.write_bytes(b"\xef\xbb\xbf" + e.read_bytes())
def _entry_array(d, es):
    for e in es: e.write_text("[]")
def _entry_big_int(d, es):
    for e in es: e.write_text(e.read_text().replace("[", "[" + "9" * 5000 + ", ", 1))
def _secret_truncated(d, es):
    for p in (WORK / "secret").rglob("*"):
        if p.is_file(): p.write_bytes(b"")
def _secret_link(d, es):
    for p in (WORK / "secret").rglob("*"):
        if p.is_file(): p.unlink(); os.symlink("/dev/zero", p)


for m in (_trunc_half, _trunc_zero, _huge_sparse, _huge_valid_prefix, _entry_link_dev_zero, _entry_fifo, _entry_dir,
          _entry_socket, _shard_dir_symlink, _version_dir_symlink, _entry_symlink_to_other_entry, _schema_version_bumped,
          _deep_json, _nan_json, _invalid_utf8, _duplicate_keys, _cachedir_tag_removed, _cache_root_is_file,
          _version_dir_is_file, _shard_is_fifo, _entry_bom, _entry_array, _entry_big_int, _secret_truncated, _secret_link):
    case("cache")(cache_case(m))


@case("cache")
def cache_dir_option_is_fifo(d):
    model(d); os.mkfifo(d / "c")
    r = pt(["check", "--cache-dir", "c", "."], d, timeout=40)
    return generic(*r[:3]) or expect_finding(*r[:3])


@case("cache")
def cache_env_dev_null(d):
    model(d)
    r = pt(["check", "."], d, env={"PT2LINT_CACHE_DIR": "/dev/null/x"})
    return generic(*r[:3]) or expect_finding(*r[:3])


@case("cache")
def edit_after_cache_same_size_same_mtime(d):
    model(d); r = pt(["check", "."], d)
    st = os.stat(d / "m.py")
    (d / "m.py").write_text(MODEL.replace(".item()", ".abs() "))
    os.utime(d / "m.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    r = pt(["check", "."], d)
    g = generic(*r[:3])
    if not g and r[0] != 0:
        return ("silent", f"stale cache result: {r[1][-200:]}")
    return g


# ---- config errors ---------------------------------------------------------------------
def cfg_case(name, text, *words, file="pyproject.toml", accept=False):
    def fn(d):
        model(d); (d / file).write_text(text)
        r = pt(["check", "--no-cache", "."], d)
        g = generic(*r[:3])
        if g:
            return g
        if accept:
            return expect_finding(*r[:3])
        return expect_error(*r[:3], *words)
    fn.__name__ = name
    case("config")(fn)


T = "[tool.pt2lint]\n"
cfg_case("ignore_int", T + "ignore = 5\n", "ignore")
cfg_case("extend_select_str", T + 'extend-select = "PTC1"\n', "extend-select")
cfg_case("target_int", T + "target = 5\n", "target")
cfg_case("capture_scalar_str", T + 'capture-scalar-outputs = "yes"\n', "capture-scalar-outputs")
cfg_case("capture_dyn_int", T + "capture-dynamic-output-shape-ops = 1\n", "capture-dynamic-output-shape-ops")
cfg_case("allow_rnn_list", T + "allow-rnn = []\n", "allow-rnn")
cfg_case("assume_compiled_str", T + 'assume-compiled = "true"\n', "assume-compiled")
cfg_case("compute_dtype_f64", T + 'compute-dtype = "float64"\n', "compute-dtype")
cfg_case("compute_dtype_int", T + "compute-dtype = 16\n", "compute-dtype")
cfg_case("exclude_str", T + 'exclude = "build"\n', "exclude")
cfg_case("extend_exclude_int", T + "extend-exclude = 5\n", "extend-exclude")
cfg_case("extend_exclude_nested", T + 'extend-exclude = [["a"]]\n', "extend-exclude")
cfg_case("src_int", T + "src = 5\n", "src")
cfg_case("src_str", T + 'src = "src"\n', "src")
cfg_case("follow_imports_str", T + 'follow-imports = "einops"\n', "follow-imports")
cfg_case("follow_imports_bad_name", T + 'follow-imports = ["a b"]\n', "follow-imports")
cfg_case("max_size_unit", T + 'max-file-size = "10XB"\n', "max-file-size")
cfg_case("max_size_bool", T + "max-file-size = true\n", "max-file-size")
cfg_case("max_size_zero", T + "max-file-size = 0\n", "max-file-size")
cfg_case("max_size_float", T + "max-file-size = 1.5\n", "max-file-size")
cfg_case("max_size_neg_str", T + 'max-file-size = "-5MB"\n', "max-file-size")
cfg_case("docs_url_int", T + "docs-url = 5\n", "docs-url")
cfg_case("docs_url_bad_field", T + 'docs-url = "https://x/{nope}"\n', "docs-url")
cfg_case("docs_url_brace", T + 'docs-url = "https://x/{"\n', "docs-url")
cfg_case("docs_url_attr", T + 'docs-url = "https://x/{code.__class__}"\n', "docs-url")
cfg_case("pfi_list_of_ints", T + '[tool.pt2lint.per-file-ignores]\n"a.py" = [5]\n', "per-file-ignores")
cfg_case("pfi_str_value", T + '[tool.pt2lint.per-file-ignores]\n"a.py" = "PTC1"\n', "per-file-ignores")
cfg_case("pfi_unknown_code", T + '[tool.pt2lint.per-file-ignores]\n"a.py" = ["PTC9999"]\n', "PTC9999")
cfg_case("pfi_empty_glob", T + '[tool.pt2lint.per-file-ignores]\n"" = ["PTC1"]\n', "per-file-ignores")
cfg_case("pfi_bracket", T + '[tool.pt2lint.per-file-ignores]\n"[" = ["PTC1"]\n', "per-file-ignores")
cfg_case("exclude_bracket_neg", T + 'exclude = ["[!]"]\n', "exclude")
cfg_case("exclude_bang_only", T + 'exclude = ["!"]\n', "exclude")
cfg_case("exclude_nul", T + 'exclude = ["a\\u0000b"]\n', "exclude")
cfg_case("exclude_huge", T + 'exclude = ["' + "a" * 200000 + '"]\n', "exclude")
cfg_case("confirm_int", T + "confirm = 5\n", "confirm")
cfg_case("confirm_unknown", T + "[tool.pt2lint.confirm]\nnope = 1\n", "nope")
cfg_case("confirm_timeout_neg", T + "[tool.pt2lint.confirm]\ntimeout = -1\n", "timeout")
cfg_case("confirm_timeout_str", T + '[tool.pt2lint.confirm]\ntimeout = "x"\n', "timeout")
cfg_case("confirm_timeout_nan", T + "[tool.pt2lint.confirm]\ntimeout = nan\n", "timeout")
cfg_case("confirm_timeout_inf", T + "[tool.pt2lint.confirm]\ntimeout = inf\n", "timeout")
cfg_case("confirm_memory_huge", T + "[tool.pt2lint.confirm]\nmemory-limit = 99999999999999999\n", "memory-limit")
cfg_case("tool_pt2lint_int", "[tool]\npt2lint = 5\n", "pt2lint")
cfg_case("tool_pt2lint_array", "[[tool.pt2lint]]\nselect = ['ALL']\n", "pt2lint")
cfg_case("toplevel_unknown_dot", "selec = ['ALL']\n", "selec", file=".pt2lint.toml")
cfg_case("toplevel_tool_table_in_pt2lint_toml", "[tool.pt2lint]\nselect = ['ALL']\n", "tool", file="pt2lint.toml")
cfg_case("nested_unknown_table", T + "[tool.pt2lint.lint]\nselect = ['ALL']\n", "lint")
cfg_case("select_empty_string", T + 'select = [""]\n', "select")
cfg_case("select_whitespace", T + 'select = [" PTC1 "]\n', "select")
cfg_case("select_comma", T + 'select = ["PTC1,PTC2"]\n', "select")
cfg_case("select_lower", T + 'select = ["ptc1"]\n', "select", accept=True)
cfg_case("key_unicode_lookalike", T + "ѕelect = ['ALL']\n", "elect")
cfg_case("datetime_value", T + "target = 1979-05-27\n", "target")
cfg_case("inline_table_select", T + "select = {a = 1}\n", "select")
cfg_case("toml_bad_escape", T + 'select = ["\\q"]\n', "pyproject.toml")
cfg_case("toml_crlf_ok", (T + 'select = ["ALL"]\n').replace("\n", "\r\n"), accept=True)
cfg_case("toml_bom", "\ufeff" + T + 'select = ["ALL"]\n', "byte-order mark")
cfg_case("toml_utf16", None, "pyproject.toml") if False else None


@case("config")
def toml_utf16(d):
    model(d); (d / "pyproject.toml").write_bytes((T + 'select = ["PTC3"]\n').encode("utf-16"))
    r = pt(["check", "--no-cache", "."], d)
    return generic(*r[:3]) or expect_error(*r[:3], "pyproject.toml")


@case("config")
def cli_select_empty(d):
    model(d)
    r = pt(["check", "--no-cache", "--select", "", "."], d)
    return generic(*r[:3]) or expect_error(*r[:3], "select")


@case("config")
def cli_exclude_bad_glob(d):
    model(d)
    r = pt(["check", "--no-cache", "--extend-exclude", "**/[z-a]", "."], d)
    return generic(*r[:3]) or expect_error(*r[:3], "z-a")


@case("config")
def cli_jobs_huge(d):
    model(d)
    r = pt(["check", "--no-cache", "-j", "100000", "."], d, timeout=90)
    return generic(*r[:3]) or (expect_finding(*r[:3]) if r[0] != 2 else None)


@case("config")
def config_option_missing(d):
    model(d)
    r = pt(["check", "--no-cache", "--config", "nope.toml", "."], d)
    return generic(*r[:3]) or expect_error(*r[:3], "nope.toml")


@case("config")
def config_option_socket(d):
    model(d); s = socket.socket(socket.AF_UNIX); s.bind(str(d / "c.toml"))
    r = pt(["check", "--no-cache", "--config", "c.toml", "."], d)
    s.close()
    return generic(*r[:3]) or expect_error(*r[:3], "c.toml")


only = sys.argv[1:]
for fam, fn in CASES:
    if only and fam not in only and fn.__name__ not in only:
        continue
    d = fresh(f"io/{fam}/{fn.__name__}")
    try:
        v = fn(d)
    except Exception as e:  # the harness itself
        v = ("harness", f"{type(e).__name__}: {e}")
    record(fam, fn.__name__, v)
summary("io.json")
