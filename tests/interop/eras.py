"""Interop of both protocol eras: the official MCP Python SDK's `Client`
against `fixture-server` (tests/src/bin/fixture-server.rs), over Streamable
HTTP and over stdio, in `auto` mode (2026-07-28: `server/discover`, then
stateless requests) and in `legacy` mode (the `initialize` handshake; over
HTTP, a 2025-11-25 session).

Each run lists the tools and calls the five read tools and the downstream
fixture tools, then lists and reads the resources (the fixture's fixed
`fixture://greeting`, an instance of its template `fixture://notes/{topic}`,
the editor's `ide://diagnostics`; an unknown URI is the SDK's `MCPError`
-32002) and lists and gets the prompts (the fixture's `introduce` with and
without its optional argument); the SDK validates every result against its own schema for the
negotiated version (at 2026-07-28 it rejects a result without `resultType`,
and a `tools/list` without `ttlMs`/`cacheScope`). A raw HTTP check then
confirms the refusals an SDK user meets: 401 without the token, with a
JSON-RPC error body.

With `--ts-client DIR` (a directory holding client.mjs and its installed
node_modules, see run.sh), the official TypeScript SDK's
`StreamableHTTPClientTransport` (1.x: 2025-11-25 sessions) runs its own checks
(ts/client.mjs) against the same HTTP server.

Usage: python eras.py FIXTURE_SERVER_BINARY [--ts-client DIR]
Exits 1 with a message naming the failed check.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
import traceback
from typing import Any

import anyio
import httpx2
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

# The scripts run as `python tests/interop/<script>.py`: their folder is on the path.
from checks import CheckFailed, check

READ_TOOLS = {"getCurrentSelection", "getOpenEditors", "getWorkspaceFolders", "getDiagnostics", "checkDocumentDirty"}
FIXTURE_TOOLS = {"add", "greet", "fixture.echo", "divide", "countWords", "forgetEverything"}
SECONDS = 60
# The fixture's resources, templates and prompt as `resources/list`,
# `resources/templates/list` and `prompts/list` show them
# (tests/fixture-tools/src/lib.rs).
GREETING = {
    "uri": "fixture://greeting",
    "name": "greeting",
    "title": "Greeting",
    "description": "The host's greeting, as a resource.",
    "mimeType": "text/plain",
}
NOTE = {
    "uriTemplate": "fixture://notes/{topic}",
    "name": "note",
    "description": "A note about a topic; any topic has one.",
    "mimeType": "text/markdown",
}
INTRODUCE = {
    "name": "introduce",
    "title": "Introduce",
    "description": "Asks for a greeting of someone, in the host's words.",
    "arguments": [
        {"name": "name", "description": "Whom to greet", "required": True},
        {"name": "style", "description": "How; plainly by default", "required": False},
    ],
}


def dump(item: Any) -> Any:
    """A result item as it was on the wire (the SDK's model, by alias)."""
    return item.model_dump(mode="json", by_alias=True, exclude_none=True)


def text_of(result: Any) -> str:
    check(not result.is_error, "a successful call", result.model_dump(mode="json"))
    return result.content[0].text


async def exercise(client: Client, workspace: str, expected_version: str, what: str) -> None:
    check(client.protocol_version == expected_version, f"{what}: negotiated {expected_version}", client.protocol_version)
    tools = await client.list_tools()
    names = {tool.name for tool in tools.tools}
    check(READ_TOOLS | FIXTURE_TOOLS <= names, f"{what}: tools/list has the read and fixture tools", sorted(names))

    folders = json.loads(text_of(await client.call_tool("getWorkspaceFolders", {})))
    check(folders["success"] is True and folders["rootPath"] == workspace, f"{what}: getWorkspaceFolders", folders)
    check(json.loads(text_of(await client.call_tool("getOpenEditors", {}))) == {"tabs": []}, f"{what}: getOpenEditors")
    selection = json.loads(text_of(await client.call_tool("getCurrentSelection", {})))
    check(selection == {"success": False, "message": "No active editor found"}, f"{what}: getCurrentSelection", selection)
    check(json.loads(text_of(await client.call_tool("getDiagnostics", {}))) == [], f"{what}: getDiagnostics")
    dirty = json.loads(text_of(await client.call_tool("checkDocumentDirty", {"filePath": "/nowhere.rs"})))
    check(dirty["isDirty"] is False, f"{what}: checkDocumentDirty", dirty)

    check(text_of(await client.call_tool("add", {"a": 2, "b": 40})) == "42", f"{what}: add")
    check(text_of(await client.call_tool("greet", {"name": "SDK"})) == '"Hello, SDK"', f"{what}: greet")
    check(text_of(await client.call_tool("fixture.echo", {"text": "hi"})) == '"Hello: hi"', f"{what}: fixture.echo (async)")
    check(text_of(await client.call_tool("divide", {"numerator": 1, "denominator": 4})) == "0.25", f"{what}: divide (blocking)")
    failed = await client.call_tool("divide", {"numerator": 1, "denominator": 0})
    check(failed.is_error and "by zero" in failed.content[0].text, f"{what}: a tool's own error", failed.model_dump(mode="json"))
    words = await client.call_tool("countWords", {"text": "a b a"})
    check(words.structured_content == {"a": 2, "b": 1}, f"{what}: countWords (structured)", words.model_dump(mode="json"))

    # Progress: SSE events before the result on the call's POST over HTTP (both
    # eras), notifications over stdio.
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    done = await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
    check(text_of(done) == '"done"', f"{what}: test_tool_with_progress answers")
    expected = [(0.0, 100.0, "working"), (50.0, 100.0, "working"), (100.0, 100.0, "working")]
    check(seen == expected, f"{what}: progress notifications before the result", seen)

    await exercise_resources_and_prompts(client, what)
    print(f"interop: {what}: ok ({client.protocol_version})")


async def exercise_resources_and_prompts(client: Client, what: str) -> None:
    # The fixed resources, sorted by URI: the fixture's, the editor's
    # (ide-mcp-tools, no document open, so its `file:///{path}` template
    # lists none), the conformance suite's (fixture-server).
    resources = [dump(r) for r in (await client.list_resources()).resources]
    check(resources[0] == GREETING, f"{what}: resources/list has fixture://greeting", resources)
    check(
        [(r["uri"], r["name"], r.get("mimeType")) for r in resources]
        == [
            ("fixture://greeting", "greeting", "text/plain"),
            ("ide://diagnostics", "diagnostics", "application/json"),
            ("test://static-binary", "static_binary", "image/png"),
            ("test://static-text", "static_text", "text/plain"),
        ],
        f"{what}: resources/list is fixture://greeting, ide://diagnostics and the conformance suite's",
        resources,
    )
    templates = [dump(t) for t in (await client.list_resource_templates()).resource_templates]
    check(
        [(t["uriTemplate"], t["name"]) for t in templates]
        == [("file:///{path}", "document"), ("fixture://notes/{topic}", "note"), ("test://template/{id}/data", "template_data")],
        f"{what}: resources/templates/list is the editor's documents, the fixture's notes, the conformance suite's",
        templates,
    )
    check(templates[1] == NOTE, f"{what}: the fixture's template as annotated", templates)

    read = [dump(c) for c in (await client.read_resource("fixture://greeting")).contents]
    check(read == [{"uri": "fixture://greeting", "mimeType": "text/plain", "text": "Hello"}], f"{what}: resources/read fixture://greeting", read)
    # A template instance: the variable percent-decoded, the URI answered as asked.
    read = [dump(c) for c in (await client.read_resource("fixture://notes/era%20checks")).contents]
    check(
        read == [{"uri": "fixture://notes/era%20checks", "mimeType": "text/markdown", "text": "# era checks\n\nNothing noted about era checks yet."}],
        f"{what}: resources/read of a template instance",
        read,
    )
    read = [dump(c) for c in (await client.read_resource("ide://diagnostics")).contents]
    check(read == [{"uri": "ide://diagnostics", "mimeType": "application/json", "text": "[]"}], f"{what}: resources/read ide://diagnostics", read)
    read = [dump(c) for c in (await client.read_resource("test://static-binary")).contents]
    check(
        len(read) == 1 and read[0]["mimeType"] == "image/png" and base64.b64decode(read[0]["blob"]).startswith(b"\x89PNG\r\n"),
        f"{what}: resources/read of a blob is base64",
        read,
    )
    for uri in ("fixture://nothing", "file:///not/open.rs"):
        try:
            await client.read_resource(uri)
        except MCPError as error:
            check(error.code == -32002, f"{what}: resources/read {uri} is -32002 (resource not found)", dump(error.error))
            check(error.message == f"resource not found: `{uri}`", f"{what}: the -32002 names the URI", error.message)
        else:
            raise CheckFailed(f"{what}: resources/read {uri} raises MCPError -32002")

    prompts = [dump(p) for p in (await client.list_prompts()).prompts]
    check(
        [p["name"] for p in prompts]
        == ["fix_diagnostics", "introduce", "test_prompt_with_arguments", "test_prompt_with_embedded_resource", "test_simple_prompt"],
        f"{what}: prompts/list",
        prompts,
    )
    check(prompts[1] == INTRODUCE, f"{what}: prompts/list shows introduce and its arguments", prompts)
    check(
        [(a["name"], a["required"]) for a in prompts[0]["arguments"]] == [("file", False), ("warnings", False)],
        f"{what}: fix_diagnostics takes the optional file and warnings",
        prompts[0],
    )
    got = dump(await client.get_prompt("introduce", {"name": "SDK", "style": "warmly"}))
    got.pop("resultType", None)
    check(
        got == {"messages": [{"role": "user", "content": {"type": "text", "text": 'Say "Hello, SDK" warmly.'}}]},
        f"{what}: prompts/get introduce with both arguments",
        got,
    )
    got = dump(await client.get_prompt("introduce", {"name": "SDK"}))
    check(got["messages"][0]["content"]["text"] == 'Say "Hello, SDK" plainly.', f"{what}: prompts/get without the optional argument", got)
    try:
        await client.get_prompt("introduce", {})
    except MCPError as error:
        check(
            (error.code, error.message) == (-32602, "invalid arguments for prompt `introduce`: missing field `name`"),
            f"{what}: prompts/get without a required argument is -32602 naming it",
            dump(error.error),
        )
    else:
        raise CheckFailed(f"{what}: prompts/get without `name` raises MCPError -32602")
    fix = dump(await client.get_prompt("fix_diagnostics", {}))
    check(
        [m["content"]["type"] for m in fix["messages"]] == ["text", "resource"]
        and fix["messages"][1]["content"]["resource"] == {"uri": "ide://diagnostics", "mimeType": "application/json", "text": "[]"},
        f"{what}: prompts/get fix_diagnostics embeds ide://diagnostics",
        fix,
    )


async def over_http(binary: str, workspace: str, ts_client: str | None) -> None:
    server = subprocess.Popen([binary, "http", workspace], stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline().split()
        check(len(line) == 2, "fixture-server printed its URL and token", line)
        url, token = line
        for mode, version in (("auto", "2026-07-28"), ("legacy", "2025-11-25")):
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=SECONDS)
            async with http:
                with anyio.fail_after(SECONDS):
                    async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                        await exercise(client, workspace, version, f"http {mode}")
        async with httpx2.AsyncClient(timeout=SECONDS) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover"}
            refused = await http.post(url, json=body, headers={"Accept": "application/json, text/event-stream"})
            check(refused.status_code == 401, "HTTP without the token: 401", refused.status_code)
            check("Bearer" in refused.headers.get("www-authenticate", ""), "401 carries WWW-Authenticate")
            check(refused.json()["error"]["code"] == -32600, "401 carries a JSON-RPC error", refused.text)
        if ts_client is not None:
            node = subprocess.run(
                ["node", os.path.join(ts_client, "client.mjs"), url, token, workspace],
                timeout=SECONDS,
                check=False,
            )
            check(node.returncode == 0, "the TypeScript SDK's checks (ts/client.mjs) passed", node.returncode)
    finally:
        server.terminate()
        server.wait(10)


async def over_stdio(binary: str, workspace: str) -> None:
    for mode, version in (("auto", "2026-07-28"), ("legacy", "2025-11-25")):
        params = StdioServerParameters(command=binary, args=["stdio", workspace], env=dict(os.environ))
        with anyio.fail_after(SECONDS):
            async with Client(params, mode=mode) as client:
                await exercise(client, workspace, version, f"stdio {mode}")


async def main() -> int:
    binary = sys.argv[1]
    ts_client = sys.argv[3] if sys.argv[2:3] == ["--ts-client"] else None
    with tempfile.TemporaryDirectory() as workspace:
        workspace = os.path.realpath(workspace)
        try:
            await over_http(binary, workspace, ts_client)
            await over_stdio(binary, workspace)
        except CheckFailed as failure:
            print(f"interop: FAILED: {failure}", file=sys.stderr)
            return 1
        except BaseException:
            traceback.print_exc()
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
