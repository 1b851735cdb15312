"""End-to-end tests of ``pt2lint lsp``: a pytest-lsp client talks to the server in a subprocess."""

from __future__ import annotations

import asyncio
import os
import pathlib
import sys
import textwrap

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from pt2lint.lsp import fix_title  # noqa: E402

BAD = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            n = x.sum().item()  # noqa: PTC301
            if x.sum() > 0:
                x = x * 2
            x.add_(1)
            return x * n
    """
)

# A server whose findings carry known fixes, whatever fixes the rules have today:
# PTC101 gets a safe fix (drop `.item()`), PTC401 an unsafe one, the others none.
PATCHED_SERVER = textwrap.dedent(
    """\
    import dataclasses
    import pt2lint.lsp as lsp
    from pt2lint.diagnostics import Applicability, Edit, Fix, Position

    _real = lsp.lint_document_result

    def lint_document_result(source, path, uri, project, overlay=None):
        out = []
        found, deps = _real(source, path, uri, project, overlay)
        for d in found:
            if d.code == "PTC101":
                fix = Fix("keep the value a 0-d tensor", Applicability.SAFE, (Edit(Position(d.end.line, d.end.column - 7), d.end, ""),), "scalar-tensor")
                d = dataclasses.replace(d, fix=fix)
            elif d.code == "PTC401":
                line = d.start.line
                fix = Fix("write out of place", Applicability.UNSAFE, (Edit(Position(line, 9), Position(line, 18), "x = x.add(1)"),), "out-of-place")
                d = dataclasses.replace(d, fix=fix)
            else:
                d = dataclasses.replace(d, fix=None)
            out.append(d)
        return out, deps

    lsp.lint_document_result = lint_document_result
    lsp.serve(0.05)
    """
)

TIMEOUT = 20


def _env() -> dict:
    env = dict(os.environ)
    env["PT2LINT_LSP_DEBOUNCE_MS"] = "50"
    env.pop("PT2LINT_CACHE_DIR", None)
    return env


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pt2lint", "lsp"], server_env=_env()))
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=root.as_uri(), workspace_folders=[])
    )
    lsp_client.root = root  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def _open(client: LanguageClient, path: pathlib.Path, text: str, version: int = 1) -> list:
    path.write_text(text)
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text))
    )
    return await _diagnostics(client, uri)


async def _diagnostics(client: LanguageClient, uri: str) -> list:
    async def wait():
        while uri not in client.diagnostics:
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        return client.diagnostics[uri]

    return await asyncio.wait_for(wait(), TIMEOUT)


@pytest.mark.asyncio
async def test_diagnostics_on_open_carry_code_href_severity_and_data(client: LanguageClient):
    path = client.root / "model.py"  # type: ignore[attr-defined]
    diags = await _open(client, path, BAD)
    by_code = {d.code: d for d in diags}
    assert {"PTC101", "PTC104", "PTC401"} <= set(by_code), [d.code for d in diags]
    item = by_code["PTC101"]
    assert item.source == "pt2lint"
    assert item.severity == types.DiagnosticSeverity.Error
    assert by_code["PTC401"].severity == types.DiagnosticSeverity.Warning
    assert item.code_description is not None and item.code_description.href.endswith("/docs/rules/PTC101.md")
    assert item.range.start.line == 6 and item.range.start.character == 20
    assert item.data["name"] == "tensor-item" and "fix" in item.data
    # the unused `# noqa: PTC301` on that line is itself reported, tagged unnecessary
    assert list(by_code["PTC002"].tags) == [types.DiagnosticTag.Unnecessary]


@pytest.mark.asyncio
async def test_change_is_debounced_and_relinted(client: LanguageClient):
    path = client.root / "m.py"  # type: ignore[attr-defined]
    diags = await _open(client, path, BAD)
    assert any(d.code == "PTC101" for d in diags)
    uri = path.as_uri()
    clean = BAD.replace("n = x.sum().item()  # noqa: PTC301", "n = x.sum()")
    # several quick edits: only the state after the last one is published
    for version, text in ((2, BAD + "\n"), (3, clean)):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
    client.diagnostics.pop(uri, None)
    diags = await _diagnostics(client, uri)
    assert not any(d.code in ("PTC101", "PTC002") for d in diags)
    assert any(d.code == "PTC104" for d in diags)


@pytest.mark.asyncio
async def test_suppress_action_and_hover(client: LanguageClient):
    path = client.root / "s.py"  # type: ignore[attr-defined]
    diags = await _open(client, path, BAD)
    d104 = next(d for d in diags if d.code == "PTC104")
    actions = await asyncio.wait_for(
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
                range=d104.range,
                context=types.CodeActionContext(diagnostics=[d104]),
            )
        ),
        TIMEOUT,
    )
    titles = [a.title for a in actions]
    assert "Suppress PTC104 on this line" in titles, titles
    action = next(a for a in actions if a.title == "Suppress PTC104 on this line")
    (edit,) = action.edit.changes[path.as_uri()]
    assert edit.new_text == "        if x.sum() > 0:  # noqa: PTC104"
    assert edit.range.start.line == 7

    # the existing `# noqa: PTC301` comment on line 7 is merged into, not duplicated
    d101 = next(d for d in diags if d.code == "PTC101")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
            range=d101.range,
            context=types.CodeActionContext(diagnostics=[d101]),
        )
    )
    suppress = next(a for a in actions if a.title == "Suppress PTC101 on this line")
    assert suppress.edit.changes[path.as_uri()][0].new_text == "        n = x.sum().item()  # noqa: PTC301, PTC101"

    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri()), position=types.Position(line=6, character=39))
    )
    assert hover is not None and "PTC301" in hover.contents.value and "print" in hover.contents.value.lower()
    nothing = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri()), position=types.Position(line=7, character=10))
    )
    assert nothing is None


@pytest.mark.asyncio
async def test_config_from_the_documents_project_and_reload(client: LanguageClient):
    project = client.root / "proj"  # type: ignore[attr-defined]
    (project / "pkg").mkdir(parents=True)
    config = project / "pyproject.toml"
    config.write_text('[tool.pt2lint]\nignore = ["PTC101"]\n')
    path = project / "pkg" / "net.py"
    diags = await _open(client, path, BAD.replace("  # noqa: PTC301", ""))
    codes = {d.code for d in diags}
    assert "PTC101" not in codes and "PTC104" in codes

    config.write_text('[tool.pt2lint]\nignore = ["PTC104"]\n')
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=config.as_uri(), type=types.FileChangeType.Changed)])
    )
    codes = {d.code for d in await _diagnostics(client, uri)}
    assert "PTC101" in codes and "PTC104" not in codes

    # a broken config is reported once as a message, and linting goes on with the defaults
    config.write_text('[tool.pt2lint]\nselec = ["PTC1"]\n')
    client.diagnostics.pop(uri, None)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    codes = {d.code for d in await _diagnostics(client, uri)}
    assert {"PTC101", "PTC104"} <= codes
    assert any("selec" in m.message for m in client.messages)


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-c", PATCHED_SERVER], server_env=_env()),
)
async def fix_client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("wsfix")
    caps = types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)))
    await lsp_client.initialize_session(types.InitializeParams(capabilities=caps, root_uri=root.as_uri()))
    lsp_client.root = root  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_quick_fixes_from_diagnostic_data_and_fix_all(fix_client: LanguageClient):
    client = fix_client
    path = client.root / "f.py"  # type: ignore[attr-defined]
    text = BAD.replace("  # noqa: PTC301", "")
    diags = await _open(client, path, text)
    d101 = next(d for d in diags if d.code == "PTC101")
    d401 = next(d for d in diags if d.code == "PTC401")
    assert d101.data["fix"]["applicability"] == "safe"
    assert d101.data["fix"]["edits"][0]["newText"] == ""
    uri = path.as_uri()

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=d101.range,
            context=types.CodeActionContext(diagnostics=[d101, d401]),
        )
    )
    by_title = {a.title: a for a in actions}
    safe = by_title["Fix PTC101: keep the value a 0-d tensor"]
    assert safe.kind == types.CodeActionKind.QuickFix and safe.is_preferred
    (doc_edit,) = safe.edit.document_changes  # versioned: the client rejects it for a newer text
    assert doc_edit.text_document.uri == uri and doc_edit.text_document.version == 1
    (edit,) = doc_edit.edits
    assert (edit.range.start.line, edit.range.start.character, edit.range.end.character) == (6, 19, 26)
    unsafe = by_title["Fix PTC401: write out of place (unsafe fix)"]
    assert not unsafe.is_preferred
    assert "Suppress PTC401 on this line" in by_title

    fix_all = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll]),
        )
    )
    assert [a.kind for a in fix_all] == ["source.fixAll.pt2lint"]
    edits = fix_all[0].edit.document_changes[0].edits
    assert [e.new_text for e in edits] == [""]  # the safe fix only, not the unsafe one

    # once the text changed, fixes computed for the old text are not offered
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="\n" + text)],
        )
    )
    stale = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=d101.range,
            context=types.CodeActionContext(diagnostics=[d101]),
        )
    )
    assert not stale


@pytest.mark.asyncio
async def test_real_fixes_become_code_actions(client: LanguageClient):
    path = client.root / "r.py"  # type: ignore[attr-defined]
    diags = await _open(client, path, BAD.replace("  # noqa: PTC301", ""))
    fixable = [d for d in diags if d.data.get("fix")]
    if not fixable:
        pytest.skip("no rule produces a fix for this model yet")
    uri = path.as_uri()
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=fixable[0].range,
            context=types.CodeActionContext(diagnostics=fixable),
        )
    )
    titles = {a.title: a for a in actions}
    for d in fixable:
        fix = d.data["fix"]
        if fix["applicability"] == "display-only":
            continue
        title = fix_title(d.code, fix)
        assert title.endswith("(unsafe fix)") == (fix["applicability"] == "unsafe")
        assert title in titles, list(titles)
        action = titles[title]
        assert action.is_preferred == (fix["applicability"] == "safe")
        assert [e.new_text for e in action.edit.changes[uri]] == [e["newText"] for e in fix["edits"]]


HELPER_CLEAN = "def score(x):\n    return x.sum()\n"
HELPER_BREAKS = "def score(x):\n    return x.sum().item()\n"
MODEL_USING_HELPER = textwrap.dedent(
    """\
    import torch
    from helper import score


    class Net(torch.nn.Module):
        def forward(self, x):
            return x * score(x)
    """
)


@pytest.mark.asyncio
async def test_editing_an_open_helper_relints_the_open_model_that_calls_it(client: LanguageClient):
    root = client.root  # type: ignore[attr-defined]
    helper, model = root / "helper.py", root / "model.py"
    assert list(await _open(client, helper, HELPER_CLEAN)) == []
    assert list(await _open(client, model, MODEL_USING_HELPER)) == []

    async def edit_helper(text: str, version: int) -> list:
        client.diagnostics.pop(model.as_uri(), None)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=helper.as_uri(), version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return await _diagnostics(client, model.as_uri())

    # the helper gains a .item() (unsaved: the model's analysis reads the open buffer)
    diags = await edit_helper(HELPER_BREAKS, 2)
    assert [d.code for d in diags] == ["PTC101"]
    d = diags[0]
    assert (d.range.start.line, d.range.start.character) == (6, 19)  # the call `score(x)` in model.py
    assert "helper.py:2 score" in d.message
    related = [(r.location.uri, r.location.range.start.line) for r in d.related_information]
    assert related == [(model.as_uri(), 6), (helper.as_uri(), 1)]
    # and loses it again
    assert list(await edit_helper(HELPER_CLEAN, 3)) == []


@pytest.mark.asyncio
async def test_closing_an_edited_helper_without_saving_relints_the_open_model_from_disk(client: LanguageClient):
    root = client.root  # type: ignore[attr-defined]
    helper, model = root / "helper.py", root / "model.py"
    assert list(await _open(client, helper, HELPER_CLEAN)) == []  # on disk: HELPER_CLEAN
    assert list(await _open(client, model, MODEL_USING_HELPER)) == []
    client.diagnostics.pop(model.as_uri(), None)
    client.diagnostics.pop(helper.as_uri(), None)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=helper.as_uri(), version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=HELPER_BREAKS)],
        )
    )
    assert [d.code for d in await _diagnostics(client, model.as_uri())] == ["PTC101"]
    # the helper document shows the break too: model.py's forward, which calls it, reaches it
    assert [d.code for d in await _diagnostics(client, helper.as_uri())] == ["PTC101"]
    # closed without saving: the edit is discarded, the model reads the helper from disk again
    client.diagnostics.pop(model.as_uri(), None)
    client.diagnostics.pop(helper.as_uri(), None)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=helper.as_uri())))
    assert list(await _diagnostics(client, helper.as_uri())) == []
    assert list(await _diagnostics(client, model.as_uri())) == []


@pytest.mark.asyncio
async def test_links_follow_the_documents_docs_url_setting(client: LanguageClient):
    project = client.root / "documented"  # type: ignore[attr-defined]
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.pt2lint]\ndocs-url = "https://docs.example.com/rules/{code}/"\n')
    path = project / "model.py"
    diags = await _open(client, path, BAD)
    hrefs = {d.code: d.code_description.href for d in diags if d.code_description is not None}
    assert hrefs["PTC101"] == "https://docs.example.com/rules/PTC101/"
    assert all(h == f"https://docs.example.com/rules/{c}/" for c, h in hrefs.items())
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri()), position=types.Position(line=6, character=39))
    )
    assert hover is not None and "(https://docs.example.com/rules/PTC301/)" in hover.contents.value


CONTINUED = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            if x.sum() > 0: y = x + \\
                1
            else: y = x
            n = x.sum().item() + \\
                1
            return y * n
    """
)


def _apply_text_edit(text: str, edit: types.TextEdit) -> str:
    """``text`` with one LSP edit applied (ASCII text: characters are UTF-16 units)."""
    lines = text.splitlines(keepends=True)

    def offset(p: types.Position) -> int:
        return sum(len(line) for line in lines[: p.line]) + p.character

    return text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]


@pytest.mark.asyncio
async def test_suppress_action_on_a_backslash_continued_statement_suppresses(client: LanguageClient):
    """The comment goes where ``check --add-noqa`` puts it: at the end of the continuation when
    that is still the finding's statement (the assignment), else on a line of its own above the
    statement (the ``if`` header ends on line 7, its one-line body continues on line 8, where a
    comment would not cover the test)."""
    path = client.root / "cont.py"  # type: ignore[attr-defined]
    uri = path.as_uri()
    text = CONTINUED
    diags = await _open(client, path, text)
    assert {(d.code, d.range.start.line) for d in diags} >= {("PTC104", 6), ("PTC101", 9)}, [(d.code, d.range.start.line) for d in diags]
    expected = {"PTC104": "        # noqa: PTC104\n", "PTC101": "            1  # noqa: PTC101"}
    for version, code in ((2, "PTC104"), (3, "PTC101")):
        diag = next(d for d in diags if d.code == code)
        actions = await asyncio.wait_for(
            client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=diag.range,
                    context=types.CodeActionContext(diagnostics=[diag]),
                )
            ),
            TIMEOUT,
        )
        action = next(a for a in actions if a.title == f"Suppress {code} on this line")
        (edit,) = action.edit.changes[uri]
        assert edit.new_text == expected[code]
        text = _apply_text_edit(text, edit)
        client.diagnostics.pop(uri, None)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        diags = await _diagnostics(client, uri)
        codes = [d.code for d in diags]
        assert code not in codes and "PTC002" not in codes, (codes, text)
    assert text.count("# noqa") == 2
