"""Config files: discovery, validation (one-line errors naming file and key), layering with CLI options."""

from __future__ import annotations

import os

import pytest

from pt2lint.config import ConfigError, FileConfig, Overrides, find_config, load_project, read_config, resolve_project
from pt2lint.discovery import DEFAULT_EXCLUDES

pytestmark = pytest.mark.usefixtures("fake_specs")


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def config_error(path) -> str:
    with pytest.raises(ConfigError) as info:
        project = resolve_project(read_config(str(path)))
        del project
    message = str(info.value)
    assert "\n" not in message
    return message


def test_nearest_pyproject_with_table_wins(in_tmp):
    write(in_tmp / "pyproject.toml", "[tool.pt2lint]\nselect = ['PTC1']\n")
    write(in_tmp / "sub" / "pyproject.toml", "[project]\nname = 'x'\n")  # no [tool.pt2lint]: skipped
    (in_tmp / "sub" / "deep").mkdir()
    assert find_config(str(in_tmp / "sub" / "deep")) == str(in_tmp / "pyproject.toml")
    write(in_tmp / "sub" / "pt2lint.toml", "select = ['PTC3']\n")
    assert find_config(str(in_tmp / "sub" / "deep")) == str(in_tmp / "sub" / "pt2lint.toml")
    write(in_tmp / "sub" / ".pt2lint.toml", "select = ['PTC3']\n")
    assert find_config(str(in_tmp / "sub")) == str(in_tmp / "sub" / ".pt2lint.toml")


def test_broken_pyproject_that_is_not_ours_is_skipped(in_tmp):
    write(in_tmp / "pyproject.toml", "[project\nname = \n")
    assert find_config(str(in_tmp)) is None


def test_load_project_reads_every_key(in_tmp):
    write(in_tmp / "pyproject.toml", """
[tool.pt2lint]
select = ["PTC1", "PTC3"]
ignore = ["PTC102"]
extend-select = ["PTC001"]
per-file-ignores = { "tests/*" = ["PTC3"], "./scripts/*.py" = ["tensor-item"] }
exclude = ["legacy/"]
extend-exclude = ["gen_*.py"]
capture-scalar-outputs = true
capture-dynamic-output-shape-ops = true
target = "export"

[tool.pt2lint.confirm]
device = "cuda"
""")
    (in_tmp / "models").mkdir()
    project = load_project(["models"])
    s = project.settings
    assert project.root == str(in_tmp)
    assert s.enabled == {"PTC001", "PTC101", "PTC301"}
    assert s.per_file_ignores == (("tests/*", frozenset({"PTC301"})), ("scripts/*.py", frozenset({"PTC101"})))
    assert s.enabled_for("tests/test_x.py") == {"PTC001", "PTC101"}
    assert s.capture_scalar_outputs and s.capture_dynamic_output_shape_ops
    assert s.target == "export" and s.project_root == str(in_tmp)
    assert project.discovery.exclude == ("legacy/",)
    assert project.discovery.extend_exclude == ("gen_*.py",)
    assert project.config.confirm == {"device": "cuda"}


def test_defaults_without_config(in_tmp):
    project = load_project(["."])
    assert project.config.path is None
    assert project.root == str(in_tmp)
    assert project.discovery.exclude == DEFAULT_EXCLUDES
    assert project.settings.target == "compile"
    assert "PTC601" not in project.settings.enabled  # export-only rule, compile target
    assert {"PTC001", "PTC101", "PTC301"} <= project.settings.enabled


def test_cli_overrides_layer_over_config(in_tmp):
    write(in_tmp / "pt2lint.toml", "select = ['PTC1']\nignore = ['PTC102']\ncapture-scalar-outputs = true\nexclude = ['a/']\n")
    config = read_config(str(in_tmp / "pt2lint.toml"))
    assert resolve_project(config).settings.enabled == {"PTC101"}
    assert resolve_project(config, Overrides(extend_select=("PTC3",))).settings.enabled == {"PTC101", "PTC301"}
    assert resolve_project(config, Overrides(ignore=("PTC101",))).settings.enabled == set()
    assert resolve_project(config, Overrides(select=("PTC3",))).settings.enabled == {"PTC301"}
    assert resolve_project(config, Overrides(select=("PTC601",))).settings.enabled == {"PTC601"}  # exact code beats target
    project = resolve_project(config, Overrides(capture_scalar_outputs=False, target="export", exclude=("b/",), extend_exclude=("c/",)))
    assert not project.settings.capture_scalar_outputs and project.settings.target == "export"
    assert project.discovery.exclude == ("b/",) and project.discovery.extend_exclude == ("c/",)


def test_explicit_config_path_and_isolated(in_tmp):
    write(in_tmp / "pyproject.toml", "[tool.pt2lint]\nselect = ['PTC3']\n")
    write(in_tmp / "elsewhere" / "custom.toml", "select = ['PTC1']\n")
    assert load_project(["."]).settings.enabled == {"PTC301"}
    project = load_project(["."], config_path=str(in_tmp / "elsewhere" / "custom.toml"))
    assert project.settings.enabled == {"PTC101", "PTC102"}
    assert project.root == str(in_tmp / "elsewhere")
    assert load_project(["."], isolated=True).config.path is None
    with pytest.raises(ConfigError, match="^--config: nope.toml: no such file$"):
        load_project(["."], config_path="nope.toml")


def test_unknown_key_names_file_key_and_suggestion(in_tmp):
    write(in_tmp / "pyproject.toml", "[tool.pt2lint]\nselec = ['PTC1']\n")
    assert config_error(in_tmp / "pyproject.toml") == "pyproject.toml: [tool.pt2lint] unknown key 'selec' (did you mean 'select'?)"
    write(in_tmp / "pt2lint.toml", "capture_scalar_outputs = true\n")
    assert config_error(in_tmp / "pt2lint.toml") == (
        "pt2lint.toml: unknown key 'capture_scalar_outputs' (did you mean 'capture-scalar-outputs'?)"
    )
    write(in_tmp / "pt2lint.toml", "colour = true\n")
    assert config_error(in_tmp / "pt2lint.toml") == "pt2lint.toml: unknown key 'colour'"


@pytest.mark.parametrize(
    "body, expected",
    [
        ("select = 'PTC1'", "'select' must be an array of strings, not a string"),
        ("exclude = ['a', 1]", "'exclude' must be an array of strings, but item 2 is an integer"),
        ("capture-scalar-outputs = 'yes'", "'capture-scalar-outputs' must be true or false, not a string"),
        ("target = 'jit'", "'target' must be one of 'compile', 'export', 'cudagraphs', not 'jit'"),
        ("per-file-ignores = ['x']", "'per-file-ignores' must be a table of glob = [selectors], not an array"),
        ("per-file-ignores = { 'a/*' = 'PTC1' }", "'per-file-ignores.\"a/*\"' must be an array of strings, not a string"),
        ("confirm = 3", "'confirm' must be a table, not an integer"),
    ],
)
def test_wrong_types_name_file_and_key(in_tmp, body, expected):
    write(in_tmp / "pyproject.toml", f"[tool.pt2lint]\n{body}\n")
    assert config_error(in_tmp / "pyproject.toml") == f"pyproject.toml: [tool.pt2lint] {expected}"


def test_unknown_selector_names_file_and_key(in_tmp):
    write(in_tmp / "pyproject.toml", "[tool.pt2lint]\nextend-select = ['PTC999']\n")
    message = config_error(in_tmp / "pyproject.toml")
    assert message.startswith("pyproject.toml: [tool.pt2lint] 'extend-select': unknown rule selector 'PTC999'")
    write(in_tmp / "pyproject.toml", "[tool.pt2lint.per-file-ignores]\n'tests/*' = ['nonsense']\n")
    message = config_error(in_tmp / "pyproject.toml")
    assert message.startswith("pyproject.toml: [tool.pt2lint] 'per-file-ignores.\"tests/*\"': unknown rule selector 'nonsense'")


def test_unknown_cli_selector_names_option(in_tmp):
    with pytest.raises(ConfigError, match="^--ignore: unknown rule selector 'PTC9'"):
        resolve_project(FileConfig(), Overrides(ignore=("PTC9",)))


def test_toml_syntax_error_names_file_and_line(in_tmp):
    write(in_tmp / "pyproject.toml", "[tool.pt2lint]\nselect = ['PTC1'\nignore = []\n")
    with pytest.raises(ConfigError) as info:
        load_project(["."])
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("pyproject.toml: invalid TOML: ") and "line 3" in message


def test_non_utf8_config_is_a_config_error(in_tmp):
    (in_tmp / "pt2lint.toml").write_bytes(b"select = ['\xff']\n")
    with pytest.raises(ConfigError, match=r"^pt2lint.toml: not valid UTF-8"):
        load_project(["."])


def test_config_outside_cwd_is_named_by_absolute_path(tmp_path, monkeypatch):
    write(tmp_path / "proj" / "pt2lint.toml", "bogus = 1\n")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    with pytest.raises(ConfigError) as info:
        load_project([str(tmp_path / "proj")])
    assert str(info.value) == f"{tmp_path / 'proj' / 'pt2lint.toml'}: unknown key 'bogus'"


def test_project_root_without_config_is_cwd_or_common_parent(tmp_path, monkeypatch):
    (tmp_path / "a" / "x").mkdir(parents=True)
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "b")
    assert load_project([str(tmp_path / "a" / "x")]).root == str(tmp_path / "a" / "x")
    assert load_project(["."]).root == os.getcwd()


def test_compute_dtype_key_is_validated_and_reaches_settings(tmp_path):
    from pt2lint.config import ConfigError, load_project

    (tmp_path / "pt2lint.toml").write_text('compute-dtype = "bfloat16"\n')
    project = load_project([str(tmp_path)])
    assert project.settings.compute_dtype == "bfloat16"
    (tmp_path / "pt2lint.toml").write_text('compute-dtype = "float64"\n')
    with pytest.raises(ConfigError) as info:
        load_project([str(tmp_path)])
    assert "compute-dtype" in str(info.value) and "pt2lint.toml" in str(info.value)


def test_src_and_follow_imports_reach_settings_and_the_cli_adds_to_them(in_tmp):
    write(in_tmp / "pyproject.toml", '[tool.pt2lint]\nsrc = ["lib"]\nfollow-imports = ["einops", "timm.layers"]\n')
    project = load_project([str(in_tmp)], overrides=Overrides(follow_imports=("kornia", "einops")))
    assert project.settings.src == ("lib",)
    assert project.settings.follow_imports == ("einops", "timm.layers", "kornia")
    assert project.settings.fingerprint() != load_project([str(in_tmp)]).settings.fingerprint()


@pytest.mark.parametrize(
    "body, expected",
    [
        ("src = 'lib'", "'src' must be an array of strings, not a string"),
        ("follow-imports = ['timm/layers']", "'follow-imports' names a module by its dotted name, not 'timm/layers'"),
    ],
)
def test_src_and_follow_imports_are_validated(in_tmp, body, expected):
    write(in_tmp / "pt2lint.toml", body + "\n")
    assert config_error(in_tmp / "pt2lint.toml") == f"pt2lint.toml: {expected}"


def test_unknown_selector_gets_the_closest_name_or_code(in_tmp):
    write(in_tmp / "pyproject.toml", "[tool.pt2lint]\nselect = ['tensor-itme']\n")
    assert config_error(in_tmp / "pyproject.toml").startswith(
        "pyproject.toml: [tool.pt2lint] 'select': unknown rule selector 'tensor-itme' (did you mean 'tensor-item'?)"
    )
    with pytest.raises(ConfigError, match=r"^--ignore: unknown rule selector 'PTC1O1' \(did you mean 'PTC101'\?\)"):
        resolve_project(FileConfig(), Overrides(ignore=("PTC1O1",)))
    with pytest.raises(ConfigError) as info:  # nothing close: no suggestion
        resolve_project(FileConfig(), Overrides(select=("zzzz",)))
    assert "did you mean" not in str(info.value)


@pytest.mark.parametrize(
    "body,expected",
    [
        ("factroy = 'make_model'", "[tool.pt2lint.confirm] unknown key 'factroy' (did you mean 'factory'?)"),
        ("timeout = -1", "[tool.pt2lint.confirm] 'timeout' must be a positive number of seconds, not -1"),
        ("backend = 'tvm'", "[tool.pt2lint.confirm] 'backend' must be one of eager, aot_eager, inductor, not 'tvm'"),
        ("'net.py::Net' = { factroy = 'm:f' }", "[tool.pt2lint.confirm] entry 'net.py::Net': unknown key 'factroy'"),
    ],
)
def test_confirm_table_is_validated_when_the_config_is_read(in_tmp, body, expected):
    write(in_tmp / "pyproject.toml", f"[tool.pt2lint]\nselect = ['ALL']\n\n[tool.pt2lint.confirm]\n{body}\n")
    with pytest.raises(ConfigError) as info:
        load_project(["."])
    assert str(info.value).startswith(f"pyproject.toml: {expected}")
    write(in_tmp / "pyproject.toml", "[tool.pt2lint.confirm]\nfactory = 'make_model'\njobs = 2\n")
    assert load_project(["."]).config.confirm == {"factory": "make_model", "jobs": 2}


def test_docs_url_reaches_the_project(in_tmp):
    from pt2lint.diagnostics import DEFAULT_DOCS_URL

    assert load_project(["."]).docs_url == DEFAULT_DOCS_URL
    write(in_tmp / "pt2lint.toml", "docs-url = 'https://docs.example.com/rules/{code}.html'\n")
    assert load_project(["."]).docs_url == "https://docs.example.com/rules/{code}.html"


@pytest.mark.parametrize("codec,named", [("utf-16", "UTF-16"), ("utf-32", "UTF-32")])
def test_a_pyproject_saved_as_utf16_is_refused_not_skipped(in_tmp, codec, named):
    # b"pt2lint" is not in the UTF-16 bytes: the table used to be missed and its select dropped
    (in_tmp / "pyproject.toml").write_bytes("[tool.pt2lint]\nselect = ['PTC3']\n".encode(codec))
    with pytest.raises(ConfigError, match=rf"^pyproject.toml: encoded as {named}; TOML files must be UTF-8"):
        load_project(["."])


def test_a_config_with_a_byte_order_mark_names_it(in_tmp):
    write(in_tmp / "pyproject.toml", "\ufeff[tool.pt2lint]\nselect = ['ALL']\n")
    with pytest.raises(ConfigError, match=r"^pyproject.toml: starts with a byte-order mark"):
        load_project(["."])


@pytest.mark.parametrize("body", ["timeout = nan", "timeout = inf", "timeout = -inf", "memory-limit = 99999999999999999"])
def test_confirm_limits_that_cannot_be_applied_are_refused(in_tmp, body):
    key = body.split()[0]
    write(in_tmp / "pyproject.toml", f"[tool.pt2lint.confirm]\n{body}\n")
    with pytest.raises(ConfigError, match=rf"^pyproject.toml: \[tool.pt2lint.confirm\] '{key}' must be a positive"):
        load_project(["."])
