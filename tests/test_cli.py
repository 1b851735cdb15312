"""``pt2lint check`` and ``pt2lint rule`` end to end: exit codes, output, stdin, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import pt2lint
from pt2lint.cli import cli, main
from clitools import repo_pythonpath
from clitools import cli_runner as runner

pytestmark = pytest.mark.usefixtures("fake_specs")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYNTAX_ERROR = "def f(:\n    pass\n"
MODEL = textwrap.dedent(
    """\
    import torch

    class Net(torch.nn.Module):
        def forward(self, x):
            n = x.sum().item()
            print(n)
            return x * n
    """
)




def run(*args, input=None):
    return runner().invoke(cli, list(args), input=input, catch_exceptions=False)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(root, name, text):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def stderr_lines(result):
    return result.stderr.splitlines()


# --- exit codes and the text format -------------------------------------------------------------


def test_clean_tree_exits_0_with_summary(project):
    write(project, "ok.py", "x = 1\n")
    result = run("check")
    assert result.exit_code == 0
    assert result.stdout == ""
    (summary,) = stderr_lines(result)
    assert summary.startswith("All checks passed! (1 file checked in ")
    assert "files/s" in summary and "MB/s" in summary


def test_syntax_error_is_a_ptc001_finding_and_exits_1(project):
    write(project, "broken.py", SYNTAX_ERROR)
    result = run("check", ".")
    assert result.exit_code == 1
    assert result.stdout == "broken.py:1:7: PTC001 SyntaxError: invalid syntax\n"
    assert stderr_lines(result)[-1].startswith("Found 1 finding in 1 file (1 file checked in ")


def test_findings_sorted_by_path_line_column(project, fake_analysis):
    write(project, "b.py", MODEL)
    write(project, "a/z.py", "y = t.item(); print(y)\n")
    write(project, "a.py", SYNTAX_ERROR)
    result = run("check", "b.py", "a", "a.py")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "a.py:1:7: PTC001 SyntaxError: invalid syntax",
        "a/z.py:1:6: PTC101 `.item()` on a tensor breaks the graph",
        "a/z.py:1:15: PTC301 `print` breaks the graph [fix available]",
        "b.py:5:20: PTC101 `.item()` on a tensor breaks the graph",
        "b.py:6:9: PTC301 `print` breaks the graph [fix available]",
    ]
    assert stderr_lines(result)[-1].startswith("Found 5 findings in 3 files (3 files checked in ")


def test_exit_zero_and_quiet(project, fake_analysis):
    write(project, "m.py", MODEL)
    result = run("check", "--exit-zero", "-q")
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == 2
    assert result.stderr == ""


def test_select_ignore_extend_select_comma_separated(project, fake_analysis):
    write(project, "m.py", MODEL)
    assert [l.split()[1] for l in run("check", "--select", "PTC3").stdout.splitlines()] == ["PTC301"]
    assert run("check", "--select", "PTC3,PTC001", "--ignore", "print-call").exit_code == 0
    assert [l.split()[1] for l in run("check", "--select", "PTC001", "--extend-select", "tensor-item").stdout.splitlines()] == ["PTC101"]
    assert [l.split()[1] for l in run("check", "--ignore", "PTC101", "--ignore", "PTC001").stdout.splitlines()] == ["PTC301"]


@pytest.mark.parametrize("value", ["", " , "])
def test_select_with_no_selector_is_an_error_not_an_empty_pass(project, fake_analysis, value):
    write(project, "m.py", MODEL)
    result = run("check", "--select", value)
    assert result.exit_code == 2
    assert stderr_lines(result) == ["error: --select: no rule selector given (use ALL for every rule, --ignore to turn rules off)"]


def test_per_file_ignores_from_config(project, fake_analysis):
    write(project, "pyproject.toml", "[tool.pt2lint.per-file-ignores]\n'scripts/*' = ['PTC3']\n")
    write(project, "scripts/run.py", MODEL)
    result = run("check")
    assert [l.split()[1] for l in result.stdout.splitlines()] == ["PTC101"]


def test_capture_and_target_options_reach_the_engine(project, monkeypatch):
    import pt2lint.analysis.driver

    seen = []
    monkeypatch.setattr(pt2lint.analysis.driver, "analyse_module", lambda m, s, f, settings, e: seen.append(settings) or [])
    write(project, "pt2lint.toml", "capture-scalar-outputs = true\n")
    write(project, "m.py", "def forward(x):\n    return x\n")  # has a region marker: not prefiltered
    assert run("check", "--capture-dynamic-output-shape-ops", "--target", "export").exit_code == 0
    assert run("check", "--no-capture-scalar-outputs").exit_code == 0
    assert (seen[0].capture_scalar_outputs, seen[0].capture_dynamic_output_shape_ops, seen[0].target) == (True, True, "export")
    assert "PTC601" in seen[0].enabled
    assert (seen[1].capture_scalar_outputs, seen[1].capture_dynamic_output_shape_ops, seen[1].target) == (False, False, "compile")


def test_statistics(project, fake_analysis):
    write(project, "m.py", MODEL)
    write(project, "n.py", "a = t.item()\n")
    result = run("check", "--statistics")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == ["2  PTC101  [ ] tensor-item", "1  PTC301  [*] print-call"]
    result = run("check", "--statistics", "--output-format", "json")
    assert json.loads(result.stdout)[0] == {"code": "PTC101", "name": "tensor-item", "count": 2, "fixable": 0}
    assert result.stderr == ""


def test_parallel_run_matches_serial_run(project, fake_analysis):
    for i in range(12):
        write(project, f"pkg/m{i:02d}.py", MODEL if i % 3 else SYNTAX_ERROR)
    serial = run("check", "-j", "1")
    parallel = run("check", "-j", "3")
    assert serial.exit_code == parallel.exit_code == 1
    assert serial.stdout == parallel.stdout and len(serial.stdout.splitlines()) == 20


# --- JSON and full formats ------------------------------------------------------------------


def test_json_output(project, fake_analysis):
    write(project, "m.py", MODEL)
    write(project, "bad.py", b"x = '\xff'\n")
    result = run("check", "--output-format", "json")
    assert result.exit_code == 2  # the undecodable file
    findings = json.loads(result.stdout)
    assert [(f["code"], f["location"]["row"]) for f in findings] == [("PTC101", 5), ("PTC301", 6)]
    item, printed = findings
    assert item["filename"] == str(project / "m.py")
    assert item["end_location"] == {"row": 5, "column": 27}
    assert item["fix"] is None and item["noqa_row"] == 5
    assert item["gb_types"] == ["GB0124"] and item["call_chain"] == ["Net.forward", "Net._helper"]
    assert item["symbol"] == "Net.forward" and item["severity"] == "error" and item["category"] == "data-dependent"
    assert item["url"].endswith("/docs/rules/PTC101.md") and item["name"] == "tensor-item"
    assert printed["fix"]["applicability"] == "safe"
    assert printed["fix"]["edits"][0]["content"] == "pass"
    assert [l for l in stderr_lines(result)] == [l for l in stderr_lines(result) if l.startswith("error: bad.py: ")]
    assert len(stderr_lines(result)) == 1


def test_full_output(project, fake_analysis):
    write(project, "m.py", MODEL)
    result = run("check", "--output-format", "full", "--select", "PTC101")
    assert result.exit_code == 1
    assert "5 |         n = x.sum().item()" in result.stdout
    assert "  |                    ^^^^^^^ PTC101" in result.stdout
    assert "= in: Net.forward (via Net.forward -> Net._helper)" in result.stdout


# --- stdin ------------------------------------------------------------------------------------


def test_stdin_without_filename_is_reported_as_dash(project):
    result = run("check", "-", input=SYNTAX_ERROR)
    assert result.exit_code == 1
    assert result.stdout == "-:1:7: PTC001 SyntaxError: invalid syntax\n"


def test_stdin_filename_used_in_messages_and_per_file_ignores(project, fake_analysis):
    write(project, "pt2lint.toml", "[per-file-ignores]\n'tests/*' = ['PTC101']\n")
    result = run("check", "--stdin-filename", "models/net.py", "-", input=MODEL)
    assert result.stdout.splitlines()[0] == "models/net.py:5:20: PTC101 `.item()` on a tensor breaks the graph"
    result = run("check", "--stdin-filename", "tests/test_net.py", input=MODEL)  # no path: stdin implied
    assert [l.split()[1] for l in result.stdout.splitlines()] == ["PTC301"]
    result = run("check", "--stdin-filename", "models/net.py", "--output-format", "json", "-", input=MODEL)
    assert json.loads(result.stdout)[0]["filename"] == str(project / "models" / "net.py")


def test_stdin_force_exclude(project, fake_analysis):
    result = run("check", "--stdin-filename", "build/gen.py", "--force-exclude", "-", input=MODEL)
    assert result.exit_code == 0 and result.stdout == ""


def test_stdin_not_utf8_is_an_error(project):
    result = run("check", "--stdin-filename", "x.py", "-", input=b"x = '\xff'\n")
    assert result.exit_code == 2
    assert stderr_lines(result)[0].startswith("error: x.py: ")  # the decoder's reason follows


def test_stdin_cannot_mix_with_paths(project):
    result = run("check", "-", "a.py", input="")
    assert result.exit_code == 2
    assert result.stderr == "error: '-' (stdin) cannot be combined with other paths\n"


# --- bad input: errors are one line, other files still checked, exit 2 -------------------------


def test_non_utf8_file_is_an_error_and_others_are_still_checked(project):
    write(project, "a_bad.py", b"# coding: utf-8\nx = '\xff\xfe'\n")
    write(project, "b_broken.py", SYNTAX_ERROR)
    result = run("check")
    assert result.exit_code == 2
    assert result.stdout == "b_broken.py:1:7: PTC001 SyntaxError: invalid syntax\n"
    error, summary = stderr_lines(result)
    assert error.startswith("error: a_bad.py: not valid UTF-8: byte 0xff")
    assert summary.startswith("Found 1 finding in 1 file; 1 path could not be checked (1 file checked")


def test_latin1_file_with_coding_line_is_fine(project):
    write(project, "latin.py", "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n".encode("latin-1"))
    assert run("check").exit_code == 0


def test_unreadable_file_is_an_error(project, monkeypatch):
    write(project, "locked.py", "x = 1\n")
    write(project, "ok.py", SYNTAX_ERROR)
    real_open = os.open

    def fake_open(file, *args, **kwargs):
        if os.fspath(file) == "locked.py":
            raise PermissionError(13, "Permission denied", file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)  # pt2lint.reading opens every file with os.open
    result = run("check", "-j", "1")
    assert result.exit_code == 2
    assert result.stdout.startswith("ok.py:1:7: PTC001")
    assert stderr_lines(result)[0] == "error: locked.py: permission denied"


def test_nonexistent_path_is_an_error_and_others_are_still_checked(project):
    write(project, "real.py", SYNTAX_ERROR)
    result = run("check", "missing_dir", "real.py")
    assert result.exit_code == 2
    assert result.stdout.startswith("real.py:1:7: PTC001")
    assert stderr_lines(result)[0] == "error: missing_dir: no such file or directory"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_loop(project):
    write(project, "pkg/a.py", "x = 1\n")
    os.symlink(str(project / "pkg"), str(project / "pkg" / "self"))
    os.symlink("loop_b", str(project / "loop_a"))
    os.symlink("loop_a", str(project / "loop_b"))
    assert run("check").exit_code == 0
    result = run("check", "loop_a", "pkg")
    assert result.exit_code == 2
    assert stderr_lines(result)[0].startswith("error: loop_a: too many levels of symbolic links")


def test_directory_named_like_a_python_file(project):
    write(project, "odd.py/inner.py", SYNTAX_ERROR)
    result = run("check", "odd.py")
    assert result.exit_code == 1
    assert result.stdout.startswith(os.path.join("odd.py", "inner.py") + ":1:7: PTC001")


def test_explicit_file_is_checked_even_when_excluded_unless_force_exclude(project):
    write(project, "pyproject.toml", "[tool.pt2lint]\nextend-exclude = ['generated/']\n")
    write(project, "generated/m.py", SYNTAX_ERROR)
    write(project, ".gitignore", "scratch.py\n")
    write(project, "scratch.py", SYNTAX_ERROR)
    assert run("check").exit_code == 0
    result = run("check", "generated/m.py", "scratch.py")
    assert result.exit_code == 1 and len(result.stdout.splitlines()) == 2
    result = run("check", "--force-exclude", "generated/m.py", "scratch.py")
    assert result.exit_code == 0 and result.stdout == ""


def test_show_files(project):
    write(project, "b.py", "")
    write(project, "a/c.pyi", "")
    write(project, "build/skip.py", "")
    result = run("check", "--show-files")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [os.path.join("a", "c.pyi"), "b.py"]


def test_no_python_files_warns_and_exits_0(project):
    write(project, "README.md", "hi\n")
    result = run("check")
    assert result.exit_code == 0
    assert stderr_lines(result)[0] == "warning: no Python files found under the given paths"


@pytest.mark.parametrize(
    "config, expected",
    [
        ("[tool.pt2lint]\nselec = ['PTC1']\n", "error: pyproject.toml: [tool.pt2lint] unknown key 'selec' (did you mean 'select'?)"),
        ("[tool.pt2lint]\nselect = ['PTC999']\n", "error: pyproject.toml: [tool.pt2lint] 'select': unknown rule selector 'PTC999'"),
        ("[tool.pt2lint]\nselect = [\n", "error: pyproject.toml: invalid TOML: "),
    ],
)
def test_config_errors_are_one_line_and_exit_2(project, config, expected):
    write(project, "pyproject.toml", config)
    write(project, "m.py", "x = 1\n")
    result = run("check")
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = stderr_lines(result)
    assert line.startswith(expected)


def test_bad_cli_selector_is_one_line(project):
    result = run("check", "--select", "PTC1,bogus-rule")
    assert result.exit_code == 2
    assert stderr_lines(result) == [
        "error: --select: unknown rule selector 'bogus-rule' (expected ALL, a code such as PTC101, a prefix such as PTC1, or a rule name)"
    ]


def test_internal_errors_are_one_line_not_a_traceback(project, monkeypatch):
    import pt2lint.analysis.driver
    import pt2lint.cli

    def boom(*args):
        raise RuntimeError("analysis bug")

    write(project, "m.py", "def forward(x):\n    return x\n")
    monkeypatch.setattr(pt2lint.analysis.driver, "analyse_module", boom)
    result = run("check")
    assert result.exit_code == 2
    assert stderr_lines(result)[0] == "error: m.py: internal error: RuntimeError: analysis bug"

    monkeypatch.setattr(pt2lint.cli, "discover", boom)
    result = run("check")
    assert result.exit_code == 2
    assert result.stderr == "error: internal error: RuntimeError: analysis bug\n"


def test_unknown_option_is_a_usage_error():
    result = run("check", "--no-such-option")
    assert result.exit_code == 2


# --- pt2lint rule ------------------------------------------------------------------------------


def test_rule_by_code_and_name():
    by_code = run("rule", "PTC101")
    assert by_code.exit_code == 0
    assert by_code.stdout.startswith("# tensor-item (PTC101)\n")
    assert "## Why is this bad?" in by_code.stdout
    assert run("rule", "tensor-item").stdout == by_code.stdout
    assert run("rule", "ptc101").stdout == by_code.stdout


def test_rule_all_and_json():
    everything = run("rule", "--all")
    # the five rule headers after the first, then the graph-break coverage (ids the throwaway
    # catalog does not classify are "unclassified", not an error)
    assert everything.exit_code == 0 and everything.stdout.count("\n# ") == 6
    assert "\n# Graph-break coverage" in everything.stdout and "unclassified" in everything.stdout
    one = json.loads(run("rule", "PTC301", "--output-format", "json").stdout)
    assert one["code"] == "PTC301" and one["name"] == "print-call" and one["explanation"].startswith("# print-call")
    many = json.loads(run("rule", "--all", "--output-format", "json").stdout)
    assert [r["code"] for r in many] == ["PTC001", "PTC002", "PTC101", "PTC102", "PTC301", "PTC601"]


def test_rule_unknown_or_missing_argument_exits_2():
    result = run("rule", "PTC999")
    assert result.exit_code == 2
    assert result.stderr == "error: unknown rule 'PTC999' (see `pt2lint rule --all`)\n"
    assert run("rule").exit_code == 2
    assert run("rule", "PTC101", "--all").exit_code == 2


# --- main() and real subprocesses ---------------------------------------------------------------


def test_main_maps_keyboard_interrupt_to_130(monkeypatch):
    import pt2lint.cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pt2lint.cli.cli, "main", interrupted)
    with pytest.raises(SystemExit) as info:
        main(["check"])
    assert info.value.code == 130


def test_main_returns_command_exit_code(project):
    write(project, "m.py", SYNTAX_ERROR)
    with pytest.raises(SystemExit) as info:
        main(["check", "-q"])
    assert info.value.code == 1
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0


def _python(args, cwd, specs_dir, **kw):
    """Run the CLI in a fresh interpreter with the throwaway rule catalog."""
    bootstrap = (
        "import pathlib, sys, pt2lint.specs as s; "
        f"s.specs_dir = lambda: pathlib.Path({str(specs_dir)!r}); "
        "from pt2lint.cli import main; sys.argv[0] = 'pt2lint'; main()"
    )
    env = dict(os.environ, PYTHONPATH=repo_pythonpath(REPO))
    return subprocess.run([sys.executable, "-c", bootstrap, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60, **kw)


def test_python_dash_m_version_and_clean_run(tmp_path):
    env = dict(os.environ, PYTHONPATH=repo_pythonpath(REPO))
    out = subprocess.run([sys.executable, "-m", "pt2lint", "--version"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == f"pt2lint {pt2lint.__version__}"
    write(tmp_path, "ok.py", "x = 1\n")
    out = subprocess.run([sys.executable, "-m", "pt2lint", "check", "--isolated", "--select", "ALL", "."],
                         cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stderr.startswith("All checks passed!")


def test_subprocess_exit_codes_and_no_traceback(tmp_path, fake_specs):
    write(tmp_path, "broken.py", SYNTAX_ERROR)
    out = _python(["check", "."], tmp_path, fake_specs)
    assert out.returncode == 1 and out.stdout == "broken.py:1:7: PTC001 SyntaxError: invalid syntax\n"
    write(tmp_path, "pt2lint.toml", "target = 'jit'\n")
    out = _python(["check", "."], tmp_path, fake_specs)
    assert out.returncode == 2
    assert out.stderr == "error: pt2lint.toml: 'target' must be one of 'compile', 'export', 'cudagraphs', not 'jit'\n"


def test_subprocess_broken_pipe_is_quiet(tmp_path, fake_specs):
    for i in range(300):
        write(tmp_path, f"m{i:03d}.py", SYNTAX_ERROR * 20)
    bootstrap_out = _python(["check", "-q", "-j", "1", "--output-format", "full", "."], tmp_path, fake_specs, stdin=subprocess.DEVNULL)
    assert bootstrap_out.returncode == 1  # sanity: plenty of output
    proc = subprocess.Popen(
        [sys.executable, "-c",
         "import pathlib, sys, pt2lint.specs as s; "
         f"s.specs_dir = lambda: pathlib.Path({str(fake_specs)!r}); "
         "from pt2lint.cli import main; main()",
         "check", "-q", "-j", "1", "--output-format", "full", "."],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=REPO),
    )
    proc.stdout.read(10)
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr


def test_output_file_prints_the_summary_and_where_it_wrote(project):
    write(project, "m.py", MODEL)
    result = run("check", "--no-cache", "-o", "report.txt")
    assert result.exit_code == 1 and result.stdout == ""
    report = (project / "report.txt").read_text()
    assert report.count("\n") == 2 and "PTC101" in report and "PTC301" in report
    lines = stderr_lines(result)
    assert lines[0].startswith("Found 2 findings in 1 file (1 file checked in ")
    assert lines[1:] == ["wrote 2 findings to report.txt"]
    # machine formats print no summary on stdout-bound runs, but with -o stderr is free
    result = run("check", "--no-cache", "--output-format", "json", "--output-file", "out.json")
    assert len(json.loads((project / "out.json").read_text())) == 2
    assert stderr_lines(result)[-1] == "wrote 2 findings to out.json" and stderr_lines(result)[0].startswith("Found 2 findings")
    assert stderr_lines(run("check", "--no-cache", "--output-format", "json")) == []
    quiet = run("check", "--no-cache", "-q", "-o", "report.txt")
    assert quiet.exit_code == 1 and quiet.stderr == ""
    write(project, "m.py", "x = 1\n")
    clean = run("check", "--no-cache", "-o", "report.txt")
    assert clean.exit_code == 0 and stderr_lines(clean)[-1] == "wrote 0 findings to report.txt"


def test_unknown_selector_on_the_command_line_suggests_the_rule(project):
    write(project, "m.py", MODEL)
    result = run("check", "--select", "tensor-itme")
    assert result.exit_code == 2
    assert stderr_lines(result) == [
        "error: --select: unknown rule selector 'tensor-itme' (did you mean 'tensor-item'?) "
        "(expected ALL, a code such as PTC101, a prefix such as PTC1, or a rule name)"
    ]
    fixed = run("fix", "--rule", "print-cal")
    assert fixed.exit_code == 2 and "unknown --rule 'print-cal' (did you mean 'print-call'?)" in fixed.stderr


def test_check_rejects_a_misspelled_confirm_key(project):
    write(project, "m.py", MODEL)
    write(project, "pyproject.toml", "[tool.pt2lint]\n\n[tool.pt2lint.confirm]\nfactroy = 'make_model'\n")
    result = run("check")
    assert result.exit_code == 2 and result.stdout == ""
    assert stderr_lines(result) == ["error: pyproject.toml: [tool.pt2lint.confirm] unknown key 'factroy' (did you mean 'factory'?)"]
