"""Interop check: the official MCP Python SDK against the `ide-mcp` binary.

The MCP work here (initialize, tools/list, tools/call, result parsing and
validation) is done by the SDK's `ClientSession`, code no one in this project
wrote; this file only starts the server, moves bytes, and checks what comes
back against PROTOCOL.md (the shared protocol facts).

Usage: python sdk_client.py BINARY REPO_ROOT [--mode stdio|ws|bridge|fixture|repo]...
Modes (default: stdio ws bridge fixture):
  stdio    `serve --stdio --diagnostics none` on the repository, with an
           open editor and a selection: all five tools, their exact shapes;
           the open documents as resources (listed, read with their text),
           `ide://diagnostics`, the `fix_diagnostics` prompt; then the SDK's
           high-level `Client` (mode "auto", 2026-07-28) on a second one.
  ws       `serve --diagnostics none --open Cargo.toml` on the repository
           over the Claude Code IDE WebSocket: lockfile, 401 without the
           token, 403 with an Origin, all five tools with the token; the open
           document listed and read as a resource, `ide://diagnostics`, the
           `fix_diagnostics` prompt; `Client` on a second connection,
           SIGTERM removes the lockfile.
  bridge   `ide-mcp bridge` as a stdio server in front of a running
           `serve` (found through its lockfile, as the claude CLI finds it),
           with the SDK's `Client` in both eras (mode "auto": 2026-07-28;
           "legacy": the 2025-11-25 handshake): the IDE's tools less those
           the CLI has already, calls relayed; `bridge --all` lists them all.
  fixture  `serve --stdio --diagnostics cargo` on a temporary copy of
           tests/fixtures/diag-crate: the known E0425 error and the
           unused-variable warning, with their exact ranges.
  repo     `serve --stdio --diagnostics cargo` on the repository itself: this
           repository's real diagnostics (runs `cargo check` on the whole
           workspace; slow on a cold cache, so not in CI's default).
Exits 1 with a message naming the failed check.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
from pydantic import ValidationError
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Subprotocol

from mcp import ClientSession
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

# The scripts run as `python tests/interop/<script>.py`: their folder is on the path.
from checks import CheckFailed, check

try:  # mcp >= 2 ships the types as the separate `mcp-types` distribution
    import mcp_types as types
except ImportError:  # pragma: no cover - mcp 1.x
    from mcp import types  # type: ignore[no-redef]

# What the headless host lists: every IDE tool but `openDiff`, which needs a
# person at an editor (PROTOCOL.md; `EDITOR_ONLY_TOOLS` in cli/src/run.rs).
TOOLS = {
    "getCurrentSelection",
    "getLatestSelection",
    "getOpenEditors",
    "getWorkspaceFolders",
    "getDiagnostics",
    "checkDocumentDirty",
    "closeAllDiffTabs",
    "close_tab",
    "openFile",
}
# What `ide-mcp bridge` lists of them: not the tools the claude CLI shows the
# model itself (getDiagnostics) or calls on its own (close_tab,
# closeAllDiffTabs, openFile; README, "ide-mcp bridge").
BRIDGE_TOOLS = TOOLS - {"getDiagnostics", "close_tab", "closeAllDiffTabs", "openFile"}
SEVERITIES = {"Error", "Warning", "Info", "Hint"}
AUTH_HEADER = "x-claude-code-ide-authorization"
# Protocol versions the `claude` CLI accepts (PROTOCOL.md, handshake).
CLI_VERSIONS = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
# A server answer, or a whole mode, that takes longer than this is a failure.
ANSWER_SECONDS = 30
MODE_SECONDS = 60
# Cargo modes: the first `cargo check` may run on a cold cache.
CARGO_SECONDS = 600


# --- the IDE WebSocket as an MCP transport ----------------------------------
#
# The SDK's own `mcp.client.websocket.websocket_client(url)` (mcp 1.x,
# src/mcp/client/websocket.py in modelcontextprotocol/python-sdk; mcp 2.x no
# longer ships a WebSocket client at all) takes no headers, and the IDE server
# requires the token in a header. So this is that function, copied, with one
# change: `additional_headers` (and `origin`, for the 403 check) are passed to
# `websockets.connect`, and the connection is yielded too so that the
# negotiated subprotocol can be checked. It builds the same two anyio memory
# streams the SDK's transports build; the SDK's `ClientSession` runs over them.


@asynccontextmanager
async def websocket_client(
    url: str, headers: dict[str, str]
) -> AsyncIterator[tuple[ClientConnection, Any, Any]]:
    read_stream_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_stream_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async with ws_connect(url, subprotocols=[Subprotocol("mcp")], additional_headers=headers) as ws:

        async def ws_reader() -> None:
            async with read_stream_writer:
                async for raw_text in ws:
                    try:
                        message = types.jsonrpc_message_adapter.validate_json(raw_text, by_name=False)
                        await read_stream_writer.send(SessionMessage(message))
                    except ValidationError as exc:
                        await read_stream_writer.send(exc)

        async def ws_writer() -> None:
            async with write_stream_reader:
                async for session_message in write_stream_reader:
                    msg_dict = session_message.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
                    await ws.send(json.dumps(msg_dict))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ws_reader)
            tg.start_soon(ws_writer)
            yield ws, read_stream, write_stream
            tg.cancel_scope.cancel()


# --- checks shared by the transports -----------------------------------------


def file_uri(path: str) -> str:
    # PROTOCOL.md: the literal "file://" + absolute path, no percent-encoding.
    return "file://" + path


def tool_json(result: types.CallToolResult, tool: str) -> Any:
    check(not result.is_error, f"{tool}: isError is false", result.model_dump(mode="json"))
    check(len(result.content) >= 1, f"{tool}: at least one content item", result.model_dump(mode="json"))
    first = result.content[0]
    check(first.type == "text", f"{tool}: the first content item is text", first.model_dump(mode="json"))
    try:
        return json.loads(first.text)
    except ValueError as exc:
        raise CheckFailed(f"{tool}: the text parses as JSON ({exc})\n    got: {first.text[:2000]}") from None


def check_position(value: Any, what: str) -> None:
    check(
        isinstance(value, dict)
        and isinstance(value.get("line"), int)
        and isinstance(value.get("character"), int)
        and value["line"] >= 0
        and value["character"] >= 0,
        f"{what}: a position {{line, character}} of non-negative integers",
        value,
    )


def check_diagnostics_shape(files: Any, what: str) -> None:
    check(isinstance(files, list), f"{what}: getDiagnostics returns a JSON list", files)
    for entry in files:
        check(
            isinstance(entry, dict)
            and isinstance(entry.get("uri"), str)
            and entry["uri"].startswith("file:///")
            and isinstance(entry.get("diagnostics"), list),
            f"{what}: each entry is {{uri: file:///…, diagnostics: [...]}}",
            entry,
        )
        for diagnostic in entry["diagnostics"]:
            check(isinstance(diagnostic.get("message"), str), f"{what}: a diagnostic has a message", diagnostic)
            check(
                diagnostic.get("severity") in SEVERITIES,
                f"{what}: severity is one of {sorted(SEVERITIES)} (a string)",
                diagnostic,
            )
            check_position(diagnostic.get("range", {}).get("start"), f"{what}: range.start")
            check_position(diagnostic.get("range", {}).get("end"), f"{what}: range.end")
            if "code" in diagnostic:
                check(isinstance(diagnostic["code"], str), f"{what}: code is a string", diagnostic)


async def initialize_and_list(session: ClientSession, what: str) -> None:
    init = await session.initialize()
    check(
        init.protocol_version in CLI_VERSIONS,
        f"{what}: initialize negotiates a version the claude CLI accepts",
        init.protocol_version,
    )
    check(init.capabilities.tools is not None, f"{what}: initialize result has capabilities.tools", init.model_dump(mode="json"))
    check(init.server_info.name == "ide-mcp", f"{what}: serverInfo.name is the host's, ide-mcp", init.server_info.model_dump(mode="json"))
    print(f"  initialize: protocolVersion {init.protocol_version}, server {init.server_info.name} {init.server_info.version}")

    listed = await session.list_tools()
    names = [tool.name for tool in listed.tools]
    check(set(names) == TOOLS and len(names) == len(TOOLS), f"{what}: tools/list has exactly the IDE tools", names)
    for tool in listed.tools:
        check(
            isinstance(tool.input_schema, dict) and tool.input_schema.get("type") == "object",
            f"{what}: {tool.name} has an object inputSchema",
            tool.input_schema,
        )
        check(bool(tool.description), f"{what}: {tool.name} has a description")
    schema = {tool.name: tool.input_schema for tool in listed.tools}
    check(schema["checkDocumentDirty"].get("required") == ["filePath"], f"{what}: checkDocumentDirty requires filePath", schema["checkDocumentDirty"])
    print(f"  tools/list: {', '.join(sorted(names))}")


async def check_workspace_folders(session: ClientSession, root: str, what: str) -> None:
    folders = tool_json(await session.call_tool("getWorkspaceFolders", {}), "getWorkspaceFolders")
    check(folders.get("success") is True, f"{what}: getWorkspaceFolders success", folders)
    check(
        folders.get("folders") == [{"name": Path(root).name, "uri": file_uri(root), "path": root}],
        f"{what}: getWorkspaceFolders folders[0] is the workspace root",
        folders,
    )
    check(folders.get("rootPath") == root, f"{what}: getWorkspaceFolders rootPath is the workspace root", folders)


async def check_selection(session: ClientSession, path: str, text: str, end: tuple[int, int], what: str) -> None:
    """getCurrentSelection is `path`'s selection from 0:0 to `end` (line, character), `text` selected."""
    selection = tool_json(await session.call_tool("getCurrentSelection", {}), "getCurrentSelection")
    line, character = end
    check(
        selection == {
            "success": True,
            "text": text,
            "filePath": path,
            "fileUrl": file_uri(path),
            "selection": {"start": {"line": 0, "character": 0}, "end": {"line": line, "character": character}, "isEmpty": end == (0, 0)},
        },
        what,
        selection,
    )


async def check_dirty_and_errors(session: ClientSession, path: str, what: str) -> None:
    for given in (path, file_uri(path)):
        dirty = tool_json(await session.call_tool("checkDocumentDirty", {"filePath": given}), "checkDocumentDirty")
        check(
            # filePath is echoed as given (path or URI), as the tool documents.
            dirty == {"success": True, "filePath": given, "isDirty": False, "isUntitled": False},
            f"{what}: checkDocumentDirty {{filePath: {given}}}",
            dirty,
        )
    absent = path + ".absent"
    dirty = tool_json(await session.call_tool("checkDocumentDirty", {"filePath": absent}), "checkDocumentDirty")
    check(dirty.get("success") is True and dirty.get("isDirty") is False, f"{what}: an absent file is not dirty (a normal result)", dirty)

    missing = await session.call_tool("checkDocumentDirty", {})
    text = " ".join(item.text for item in missing.content if item.type == "text")
    check(missing.is_error is True, f"{what}: checkDocumentDirty without filePath is isError: true", missing.model_dump(mode="json"))
    check("filePath" in text, f"{what}: the error text names filePath", text)

    one = file_uri(path)
    files = tool_json(await session.call_tool("getDiagnostics", {"uri": one}), "getDiagnostics")
    check(files == [{"uri": one, "diagnostics": []}], f"{what}: getDiagnostics {{uri}} echoes the uri, no diagnostics", files)


def encoded_file_uri(path: str) -> str:
    # How resources/list names an open document: percent-encoded.
    return "file://" + urllib.parse.quote(path)


async def check_resources_and_prompts(session: ClientSession, opened: list[tuple[str, str]], what: str) -> None:
    """The editor's resources and prompt (ide-mcp-tools): `opened` is the
    open documents, (path, languageId), in the editor's order, none dirty."""
    listed = [r.model_dump(mode="json", by_alias=True, exclude_none=True) for r in (await session.list_resources()).resources]
    check(
        [(r["uri"], r["name"], r.get("mimeType")) for r in listed]
        == [("ide://diagnostics", "diagnostics", "application/json")]
        + [(encoded_file_uri(path), os.path.basename(path), "text/plain") for path, _ in opened],
        f"{what}: resources/list is ide://diagnostics and each open document",
        listed,
    )
    for entry, (path, language) in zip(listed[1:], opened):
        check(
            entry.get("description", "").startswith(f"{path} open in the editor ({language})"),
            f"{what}: an open document's description names its path and language",
            entry,
        )
    templates = (await session.list_resource_templates()).resource_templates
    check([(t.uri_template, t.name) for t in templates] == [("file:///{path}", "document")], f"{what}: resources/templates/list", [t.model_dump(mode="json") for t in templates])
    for path, _ in opened:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for uri in (encoded_file_uri(path), file_uri(path)):
            read = [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in (await session.read_resource(uri)).contents]
            check(read == [{"uri": uri, "mimeType": "text/plain", "text": text}], f"{what}: resources/read {uri} is the document's text", read)
    read = [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in (await session.read_resource("ide://diagnostics")).contents]
    check(read == [{"uri": "ide://diagnostics", "mimeType": "application/json", "text": "[]"}], f"{what}: resources/read ide://diagnostics with --diagnostics none", read)
    absent = file_uri(os.path.join(os.path.dirname(opened[0][0]) if opened else "/", "not-open.txt"))
    try:
        await session.read_resource(absent)
    except MCPError as error:
        check((error.code, error.message) == (-32002, f"resource not found: `{absent}`"), f"{what}: a file not open is -32002", error.error.model_dump(mode="json"))
    else:
        raise CheckFailed(f"{what}: resources/read of a file not open raises MCPError -32002")

    prompts = (await session.list_prompts()).prompts
    check([p.name for p in prompts] == ["fix_diagnostics"], f"{what}: prompts/list", [p.model_dump(mode="json") for p in prompts])
    check(
        [(a.name, a.required) for a in prompts[0].arguments or []] == [("file", False), ("warnings", False)],
        f"{what}: fix_diagnostics takes the optional file and warnings",
        prompts[0].model_dump(mode="json"),
    )
    for arguments, scope in (({}, "the open files"), ({"file": opened[0][0], "warnings": "yes"} if opened else {}, None)):
        got = (await session.get_prompt("fix_diagnostics", arguments)).model_dump(mode="json", by_alias=True, exclude_none=True)
        if scope is None:
            scope = f"`{opened[0][0]}`" if opened else "the open files"
        kinds = "errors and warnings" if arguments.get("warnings") == "yes" else "errors"
        check(got.get("description") == f"Fix the {kinds} in {scope}", f"{what}: fix_diagnostics {arguments}: its description", got)
        messages = got["messages"]
        check(
            [(m["role"], m["content"]["type"]) for m in messages] == [("user", "text"), ("user", "resource")]
            and messages[0]["content"]["text"].startswith(f"The editor reports no {kinds} in {scope} right now.")
            and messages[1]["content"]["resource"] == {"uri": "ide://diagnostics", "mimeType": "application/json", "text": "[]"},
            f"{what}: fix_diagnostics {arguments}: a user message and ide://diagnostics embedded",
            got,
        )
    print(f"  resources: ide://diagnostics and {len(opened)} open documents read; prompts/get fix_diagnostics")


async def check_high_level_client(server: Any, root: str, what: str) -> None:
    """mcp 2.x's default entry point, `Client` (mode "auto"), on a new connection.

    It first probes `server/discover` and, finding 2026-07-28 there, sends
    every request stateless (no `initialize`), each validated against the
    2026-07-28 schema (`resultType`, the cache hints of `tools/list`).
    """
    async with Client(server, read_timeout_seconds=ANSWER_SECONDS) as client:
        version = client.session.protocol_version
        check(version == "2026-07-28", f"{what}: Client (mode auto) speaks 2026-07-28 after server/discover", version)
        listed = await client.list_tools()
        check({tool.name for tool in listed.tools} == TOOLS, f"{what}: Client lists the IDE tools", [t.name for t in listed.tools])
        folders = tool_json(await client.call_tool("getWorkspaceFolders", {}), "getWorkspaceFolders")
        check(folders.get("rootPath") == root, f"{what}: Client calls getWorkspaceFolders", folders)
        read = [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in (await client.read_resource("ide://diagnostics")).contents]
        check(read == [{"uri": "ide://diagnostics", "mimeType": "application/json", "text": "[]"}], f"{what}: Client reads ide://diagnostics", read)
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        check(prompts == ["fix_diagnostics"], f"{what}: Client lists the prompts", prompts)
    print(f"  mcp.client.Client (mode auto): server/discover, then stateless requests ({version})")


# --- modes -------------------------------------------------------------------


def server_log(name: str) -> TextIO:
    return tempfile.NamedTemporaryFile("w+", prefix=f"ide-mcp-{name}-", suffix=".log", delete=True)


def tail(log: TextIO, lines: int = 30) -> str:
    log.flush()
    log.seek(0)
    return "".join(log.readlines()[-lines:])


@contextmanager
def serving_ide(binary: str, workspace: str, opened: str, env: dict[str, str], log: TextIO, name: str) -> Iterator[subprocess.Popen[bytes]]:
    """`ide-mcp serve` of `workspace` with `opened` open and no diagnostics, its output in `log`:
    the tail of that shown if the block fails; stopped (SIGTERM, then SIGKILL after 10 s) if still running after it."""
    proc = subprocess.Popen(
        [binary, "serve", "--workspace", workspace, "--diagnostics", "none", "--open", opened],
        cwd=workspace, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
    )
    try:
        yield proc
    except BaseException:
        print(f"  {name} stderr (last lines):\n{tail(log)}", file=sys.stderr)
        raise
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    # stdio_client passes only HOME, PATH, … by default; cargo and rustup may
    # need their own variables to find the toolchain.
    env = {key: os.environ[key] for key in ("CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUST_LOG") if key in os.environ}
    return env | (extra or {})


async def mode_stdio(binary: str, root: str) -> None:
    opened = os.path.join(root, "README.md")
    selected = os.path.join(root, "tests", "interop", "sdk_client.py")
    with open(selected, encoding="utf-8") as f:
        first_lines = f.read().split("\n")
    # The selection: the first two lines of this file and the first three
    # characters of the third (ASCII, so UTF-16 columns = characters).
    expected_text = "\n".join(first_lines[:2]) + "\n" + first_lines[2][:3]
    params = StdioServerParameters(
        command=binary,
        args=["serve", "--stdio", "--workspace", root, "--diagnostics", "none",
              "--open", opened, "--select", f"{selected}:1:1-3:4"],
        env=child_env(),
        cwd=root,
    )
    with server_log("stdio") as log:
        try:
            async with stdio_client(params, errlog=log) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=ANSWER_SECONDS) as session:
                    await initialize_and_list(session, "stdio")
                    await check_workspace_folders(session, root, "stdio")

                    editors = tool_json(await session.call_tool("getOpenEditors", {}), "getOpenEditors")
                    check(
                        editors == {"tabs": [
                            {"uri": file_uri(opened), "isActive": False, "label": "README.md", "languageId": "markdown", "isDirty": False},
                            {"uri": file_uri(selected), "isActive": True, "label": "sdk_client.py", "languageId": "python", "isDirty": False},
                        ]},
                        "stdio: getOpenEditors lists the --open file and the --select file (active)",
                        editors,
                    )

                    await check_selection(
                        session, selected, expected_text, (2, 3),
                        "stdio: getCurrentSelection is the --select range, zero-based, with its text",
                    )

                    files = tool_json(await session.call_tool("getDiagnostics", {}), "getDiagnostics")
                    check(files == [], "stdio: getDiagnostics with --diagnostics none is []", files)

                    await check_dirty_and_errors(session, selected, "stdio")
                    print("  tools/call: all five tools answered with the PROTOCOL.md shapes")
                    await check_resources_and_prompts(session, [(opened, "markdown"), (selected, "python")], "stdio")
            # A second server process; `Client(params)` would do the same with the logs on our stderr.
            await check_high_level_client(stdio_client(params, errlog=log), root, "stdio")
        except BaseException:
            print(f"  server stderr (last lines):\n{tail(log)}", file=sys.stderr)
            raise


def lockfiles(config: Path) -> list[Path]:
    return sorted((config / "ide").glob("*.lock")) if (config / "ide").is_dir() else []


async def expect_refused(url: str, headers: dict[str, str], origin: str | None, status: int, what: str) -> None:
    try:
        async with ws_connect(url, subprotocols=[Subprotocol("mcp")], additional_headers=headers, origin=origin):
            pass
    except InvalidStatus as exc:
        check(exc.response.status_code == status, f"ws: {what} gets HTTP {status}", exc.response.status_code)
        return
    raise CheckFailed(f"ws: {what} gets HTTP {status}\n    got: the upgrade succeeded")


async def mode_ws(binary: str, root: str) -> None:
    with tempfile.TemporaryDirectory(prefix="ide-mcp-interop-") as tmp, server_log("ws") as log:
        config = Path(tmp) / "config"
        env = os.environ | {"CLAUDE_CONFIG_DIR": str(config)}
        env.pop("CLAUDE_CODE_SSE_PORT", None)
        manifest = os.path.join(root, "Cargo.toml")
        with serving_ide(binary, root, manifest, env, log, "server") as proc:
            deadline = time.monotonic() + ANSWER_SECONDS
            lock: dict[str, Any] | None = None
            while time.monotonic() < deadline:
                check(proc.poll() is None, "ws: the server keeps running", f"exit code {proc.returncode}")
                found = lockfiles(config)
                if found:
                    try:
                        lock = json.loads(found[0].read_text())
                        break
                    except ValueError:
                        pass  # written atomically, so this should not happen; retry
                await anyio.sleep(0.05)
            check(lock is not None, f"ws: a lockfile appears in $CLAUDE_CONFIG_DIR/ide within {ANSWER_SECONDS} s", [str(p) for p in lockfiles(config)])
            assert lock is not None
            lock_path = lockfiles(config)[0]
            check(len(lockfiles(config)) == 1, "ws: exactly one lockfile", [str(p) for p in lockfiles(config)])
            port = int(lock_path.stem)
            check(lock.get("pid") == proc.pid, "ws: lockfile pid is the server's", lock.get("pid"))
            check(lock.get("transport") == "ws", "ws: lockfile transport is ws", lock.get("transport"))
            check(lock.get("workspaceFolders") == [root], "ws: lockfile workspaceFolders is [root]", lock.get("workspaceFolders"))
            check(lock.get("ideName") == "ide-mcp", "ws: lockfile ideName", lock.get("ideName"))
            check(isinstance(lock.get("authToken"), str) and len(lock["authToken"]) >= 32, "ws: lockfile has an authToken", lock.get("authToken"))
            check(lock_path.stat().st_mode & 0o777 == 0o600, "ws: lockfile mode 0600", oct(lock_path.stat().st_mode))
            print(f"  lockfile: <config>/ide/{port}.lock, pid {proc.pid}, transport ws")

            url = f"ws://127.0.0.1:{port}/"
            token = lock["authToken"]
            await expect_refused(url, {}, None, 401, "an upgrade without the token")
            await expect_refused(url, {AUTH_HEADER: token[:-1] + ("0" if token[-1] != "0" else "1")}, None, 401, "an upgrade with a wrong token")
            await expect_refused(url, {AUTH_HEADER: token}, "http://evil.example", 403, "an upgrade with an Origin header")
            print("  refused: no token → 401, wrong token → 401, Origin → 403")

            async with websocket_client(url, {AUTH_HEADER: token}) as (ws, read, write):
                check(ws.subprotocol == "mcp", "ws: the server selects the offered subprotocol mcp", ws.subprotocol)
                async with ClientSession(read, write, read_timeout_seconds=ANSWER_SECONDS) as session:
                    await initialize_and_list(session, "ws")
                    await check_workspace_folders(session, root, "ws")
                    editors = tool_json(await session.call_tool("getOpenEditors", {}), "getOpenEditors")
                    check(
                        editors == {"tabs": [{"uri": file_uri(manifest), "isActive": True, "label": "Cargo.toml", "languageId": "toml", "isDirty": False}]},
                        "ws: getOpenEditors lists the --open file, active",
                        editors,
                    )
                    await check_selection(
                        session, manifest, "", (0, 0),
                        "ws: getCurrentSelection of the --open file is its empty selection at 0:0",
                    )
                    files = tool_json(await session.call_tool("getDiagnostics", {}), "getDiagnostics")
                    check(files == [], "ws: getDiagnostics with --diagnostics none is []", files)
                    await check_dirty_and_errors(session, os.path.join(root, "Cargo.toml"), "ws")
                    await session.send_ping()
                    print("  tools/call: all five tools answered with the PROTOCOL.md shapes")
                    await check_resources_and_prompts(session, [(manifest, "toml")], "ws")

            @asynccontextmanager
            async def transport() -> AsyncIterator[tuple[Any, Any]]:
                async with websocket_client(url, {AUTH_HEADER: token}) as (_ws, read, write):
                    yield read, write

            await check_high_level_client(transport(), root, "ws")

            proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                raise CheckFailed("ws: the server exits within 10 s of SIGTERM") from None
            check(code == 0, "ws: the server exits 0 on SIGTERM", code)
            check(not lock_path.exists(), "ws: the lockfile is gone after SIGTERM", str(lock_path))
            print("  SIGTERM: exit 0, lockfile removed")


async def mode_bridge(binary: str, root: str) -> None:
    with tempfile.TemporaryDirectory(prefix="ide-mcp-interop-") as tmp, server_log("bridge") as log:
        tmp = os.path.realpath(tmp)
        config, run, workspace = (os.path.join(tmp, name) for name in ("config", "run", "ws"))
        os.makedirs(os.path.join(workspace, "src"))
        opened = os.path.join(workspace, "src", "main.py")
        with open(opened, "w", encoding="utf-8") as f:
            f.write("print('hello')\n")
        env = os.environ | {"CLAUDE_CONFIG_DIR": config, "XDG_RUNTIME_DIR": run}
        env.pop("CLAUDE_CODE_SSE_PORT", None)
        with serving_ide(binary, workspace, opened, env, log, "IDE (serve)") as proc:
            deadline = time.monotonic() + ANSWER_SECONDS
            while not lockfiles(Path(config)):
                check(proc.poll() is None, "bridge: the IDE (serve) keeps running", f"exit code {proc.returncode}")
                check(time.monotonic() < deadline, f"bridge: the IDE's lockfile appears within {ANSWER_SECONDS} s")
                await anyio.sleep(0.05)
            bridge_env = child_env({"CLAUDE_CONFIG_DIR": config, "XDG_RUNTIME_DIR": run, "RUST_LOG": "warn"})
            for mode, version in (("auto", "2026-07-28"), ("legacy", "2025-11-25")):
                what = f"bridge {mode}"
                # In a subdirectory of the workspace, as `claude` may be.
                params = StdioServerParameters(command=binary, args=["bridge"], env=bridge_env, cwd=os.path.dirname(opened))
                async with Client(params, mode=mode, read_timeout_seconds=ANSWER_SECONDS) as client:
                    check(client.protocol_version == version, f"{what}: negotiates {version}", client.protocol_version)
                    listed = await client.list_tools()
                    names = [tool.name for tool in listed.tools]
                    check(set(names) == BRIDGE_TOOLS and len(names) == len(BRIDGE_TOOLS), f"{what}: tools/list is the IDE's tools less the CLI's", names)
                    check(all(tool.description and tool.input_schema.get("type") == "object" for tool in listed.tools), f"{what}: each tool as the IDE describes it", [t.model_dump(mode="json") for t in listed.tools])
                    await check_workspace_folders(client, workspace, what)
                    editors = tool_json(await client.call_tool("getOpenEditors", {}), "getOpenEditors")
                    check(
                        editors == {"tabs": [{"uri": file_uri(opened), "isActive": True, "label": "main.py", "languageId": "python", "isDirty": False}]},
                        f"{what}: getOpenEditors, relayed from the IDE",
                        editors,
                    )
                    dirty = tool_json(await client.call_tool("checkDocumentDirty", {"filePath": opened}), "checkDocumentDirty")
                    check(dirty == {"success": True, "filePath": opened, "isDirty": False, "isUntitled": False}, f"{what}: checkDocumentDirty", dirty)
                    missing = await client.call_tool("checkDocumentDirty", {})
                    check(missing.is_error is True and "filePath" in missing.content[0].text, f"{what}: the IDE's isError passes through", missing.model_dump(mode="json"))
                print(f"  {what}: {version}, {len(names)} tools, calls relayed to the IDE on its WebSocket")
            params = StdioServerParameters(command=binary, args=["bridge", "--all"], env=bridge_env, cwd=workspace)
            async with Client(params, read_timeout_seconds=ANSWER_SECONDS) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                check(names == TOOLS, "bridge --all: every tool the IDE serves", sorted(names))
            print("  bridge --all: every tool the IDE serves")


async def cargo_diagnostics(binary: str, workspace: str, env: dict[str, str], name: str) -> list[Any]:
    """All diagnostics of `workspace` after its first `cargo check`, over stdio."""
    params = StdioServerParameters(
        command=binary,
        # getDiagnostics without `uri` waits for the running check up to
        # --diagnostics-wait: long enough here for the whole first check.
        args=["serve", "--stdio", "--workspace", workspace, "--diagnostics", "cargo",
              "--diagnostics-wait", str(CARGO_SECONDS * 1000)],
        env=child_env(env),
        cwd=workspace,
    )
    with server_log(name) as log:
        try:
            async with stdio_client(params, errlog=log) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=ANSWER_SECONDS) as session:
                    await initialize_and_list(session, name)
                    await check_workspace_folders(session, workspace, name)
                    started = time.monotonic()
                    result = await session.call_tool("getDiagnostics", {}, read_timeout_seconds=CARGO_SECONDS)
                    files = tool_json(result, "getDiagnostics")
                    check_diagnostics_shape(files, name)
                    count = sum(len(entry["diagnostics"]) for entry in files)
                    print(f"  getDiagnostics: {count} diagnostics in {len(files)} files after {time.monotonic() - started:.1f} s")
                    return files
        except BaseException:
            print(f"  server stderr (last lines):\n{tail(log)}", file=sys.stderr)
            raise


async def mode_fixture(binary: str, root: str) -> None:
    with tempfile.TemporaryDirectory(prefix="ide-mcp-interop-") as tmp:
        workspace = os.path.join(os.path.realpath(tmp), "ws")
        shutil.copytree(os.path.join(root, "tests", "fixtures", "diag-crate"), workspace)
        files = await cargo_diagnostics(binary, workspace, {"CARGO_TARGET_DIR": os.path.join(tmp, "target")}, "fixture")
        by_uri = {entry["uri"]: entry["diagnostics"] for entry in files}
        broken = file_uri(os.path.join(workspace, "broken", "src", "lib.rs"))
        warns = file_uri(os.path.join(workspace, "warns", "src", "lib.rs"))
        check(set(by_uri) == {broken, warns}, "fixture: diagnostics for exactly broken/src/lib.rs and warns/src/lib.rs", sorted(by_uri))
        check(len(by_uri[broken]) == 1, "fixture: one diagnostic in broken/src/lib.rs", by_uri[broken])
        check(len(by_uri[warns]) == 1, "fixture: one diagnostic in warns/src/lib.rs", by_uri[warns])
        error, warning = by_uri[broken][0], by_uri[warns][0]
        check(
            error["code"] == "E0425" and error["severity"] == "Error" and error.get("source") == "rustc"
            # `    let pair = ("héllo 🦀", missing_value + value);`: the crab is two UTF-16 units.
            and error["range"] == {"start": {"line": 5, "character": 28}, "end": {"line": 5, "character": 41}}
            and error["message"].startswith("cannot find value `missing_value` in this scope"),
            "fixture: the E0425 error at line 5, characters 28-41 (UTF-16), severity Error, source rustc",
            error,
        )
        check(
            warning["code"] == "unused_variables" and warning["severity"] == "Warning"
            and warning["range"] == {"start": {"line": 4, "character": 8}, "end": {"line": 4, "character": 14}},
            "fixture: the unused_variables warning at line 4, characters 8-14",
            warning,
        )
        print("  fixture: E0425 error and unused_variables warning, exact ranges")


async def mode_repo(binary: str, root: str) -> None:
    # The repository's own `target/`, as a developer would run it.
    await cargo_diagnostics(binary, root, {}, "repo")


def first_leaf(exc: BaseException) -> BaseException:
    """The first exception inside anyio's task-group exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


MODES = {"stdio": mode_stdio, "ws": mode_ws, "bridge": mode_bridge, "fixture": mode_fixture, "repo": mode_repo}
LIMITS = {"stdio": MODE_SECONDS, "ws": MODE_SECONDS, "bridge": MODE_SECONDS, "fixture": CARGO_SECONDS + MODE_SECONDS, "repo": CARGO_SECONDS + MODE_SECONDS}


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("root")
    parser.add_argument("--mode", action="append", choices=sorted(MODES))
    args = parser.parse_args()
    binary = os.path.realpath(args.binary)
    root = os.path.realpath(args.root)
    modes = args.mode or ["stdio", "ws", "bridge", "fixture"]

    failed = []
    for mode in modes:
        print(f"[{mode}]", flush=True)
        started = time.monotonic()
        try:
            with anyio.fail_after(LIMITS[mode]):
                await MODES[mode](binary, root)
        except BaseException as raised:  # a failed check, a timeout, an SDK error: all failures
            if isinstance(raised, KeyboardInterrupt):
                raise
            exc = first_leaf(raised)
            if isinstance(exc, CheckFailed):
                print(f"FAIL {mode}: {exc}", flush=True)
                failed.append(mode)
                continue
            traceback.print_exception(raised)
            if isinstance(exc, TimeoutError):
                print(f"FAIL {mode}: did not finish within {LIMITS[mode]} s", flush=True)
            else:
                print(f"FAIL {mode}: {type(exc).__name__}: {exc}", flush=True)
            failed.append(mode)
        else:
            print(f"ok   {mode} ({time.monotonic() - started:.1f} s)", flush=True)
    if failed:
        print(f"interop: FAILED: {', '.join(failed)}")
        return 1
    print(f"interop: all passed ({', '.join(modes)})")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
