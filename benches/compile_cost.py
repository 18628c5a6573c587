#!/usr/bin/env python3
"""Compile cost of `#[mcp_tool]`, `#[mcp_resource]` and `#[mcp_prompt]`,
side by side with rmcp.

Three generated crates of the same 100 items, in ten modules of ten, for
each of `--items` (default `tools`; `all` is the three, one after the other):

tools (three arguments each: `file_path: String, line: Option<u32>,
verbose: bool`, one doc line, a serializable reply struct):
  - plain: the functions with no attribute (the baseline);
  - ours:  each function `#[mcp_tool(read_only)]`, against the workspace's runtime;
  - rmcp:  each tool a method in a `#[tool_router]` impl (one per module,
           the ten routers added up), `#[tool(annotations(read_only_hint =
           true))]`, its arguments a `#[derive(Deserialize, JsonSchema)]`
           struct taken as `Parameters<T>` (rmcp's way of taking several
           arguments), the reply returned as `ContentBlock::json` (JSON text,
           as ours), rmcp pinned below, from crates.io.

resources (one doc line, returning `String`; the even-numbered ones
templates `notes://{topic}/n{i}` taking `topic: String`, the odd-numbered
ones fixed URIs `notes://fixed/n{i}` taking nothing):
  - plain: the functions;
  - ours:  each `#[mcp_resource(uri = ...)]`;
  - rmcp:  which has no resource macro: the functions as methods, and a
           `ServerHandler` whose `list_resources`, `list_resource_templates`
           and `read_resource` are written by hand, each module listing its
           resources and matching a URI against them, one arm a resource.

prompts (two arguments, `file: String, focus: Option<String>`, one doc
line, one user message):
  - plain: the functions, returning `Vec<String>`;
  - ours:  each `#[mcp_prompt]`, returning `Vec<PromptMessage>`;
  - rmcp:  each a method in a `#[prompt_router]` impl (one per module, the
           routers added up), `#[prompt]`, its arguments a
           `#[derive(Deserialize, JsonSchema)]` struct taken as
           `Parameters<T>`, returning `Vec<PromptMessage>`.

Measures, alternating the crates (plain ours rmcp plain ours rmcp ...), medians of:
  - full: `cargo clean -p <crate>`, then `cargo build` (dependencies already built);
  - incremental: one item's body edited (a literal changed), then `cargo build`
    (`--touch`: its module touched instead, nothing changed);
  - full check: `cargo clean -p <crate>`, then `cargo check` (the front end alone).

Each as wall-clock and CPU time (user + system of cargo and rustc): on a
loaded machine the CPU time is the steadier of the two.

    python3 benches/compile_cost.py [--runs 5] [--items tools,resources,prompts|all]
                                    [--only plain,ours] [--touch]

The crates are generated under $CARGO_TARGET_DIR/compile-cost/ (or
target/compile-cost/) and share one target dir there; `cargo build` (dev
profile, with whatever CARGO_PROFILE_* the environment sets), `--offline`
after a first build that fetches and builds the dependencies. None of them
is a member of the workspace: `cargo test --workspace` never builds rmcp.
"""
import argparse
import os
import resource
import re
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "compile-cost"
MODULES = 10
PER_MODULE = 10
# The latest rmcp that builds with the workspace's toolchain (rust-toolchain.toml).
RMCP = "=3.11.0"
EDITED = (3, 4)  # module and tool index (within the module) whose body is edited
KINDS = ("plain", "ours", "rmcp")
ITEMS = ("tools", "resources", "prompts")


def doc(i: int) -> str:
    return f"/// Returns the file name and line {i} of the request."


def reply(i: int) -> str:
    return f'''
/// The reply of tool {i}.
#[derive(Serialize)]
pub struct Reply{i} {{
    file_path: String,
    line: u32,
    verbose: bool,
}}
'''


def free_fn(i: int, annotated: bool) -> str:
    attr = "#[mcp_tool(read_only)]\n" if annotated else ""
    return f'''
{doc(i)}
{attr}pub fn tool_{i}(file_path: String, line: Option<u32>, verbose: bool) -> Reply{i} {{
    Reply{i} {{ file_path, line: line.unwrap_or({i}), verbose }}
}}
''' + reply(i)


def rmcp_router_module(m: int, uses: list[str], router: str, item: Callable[[int], tuple[str, str]]) -> str:
    """An rmcp module of routed items: `uses`, each item's own code, then
    their methods in one `impl Server` under the `router` attribute;
    `item(i)` gives item `i`'s (code, method)."""
    out = [*uses, "", "use crate::Server;"]
    methods = []
    for t in range(PER_MODULE):
        code, method = item(m * PER_MODULE + t)
        out.append(code)
        methods.append(method)
    out.append(f"{router}\nimpl Server {{")
    out.extend(methods)
    out.append("}\n")
    return "\n".join(out)


def rmcp_tool(i: int) -> tuple[str, str]:
    """An rmcp user's tool `i`: its arguments and reply, and its method."""
    code = f'''
/// The arguments of tool {i}.
#[derive(Deserialize, JsonSchema)]
pub struct Args{i} {{
    file_path: String,
    line: Option<u32>,
    verbose: bool,
}}
''' + reply(i)
    method = f'''
    {doc(i)}
    #[tool(annotations(read_only_hint = true))]
    pub fn tool_{i}(
        &self,
        Parameters(Args{i} {{ file_path, line, verbose }}): Parameters<Args{i}>,
    ) -> Result<ContentBlock, ErrorData> {{
        ContentBlock::json(Reply{i} {{ file_path, line: line.unwrap_or({i}), verbose }})
    }}
'''
    return code, method


def rmcp_module(m: int) -> str:
    uses = [
        "use rmcp::handler::server::wrapper::Parameters;",
        "use rmcp::model::ContentBlock;",
        "use schemars::JsonSchema;",
        "use rmcp::{ErrorData, tool, tool_router};",
        "use serde::{Deserialize, Serialize};",
    ]
    return rmcp_router_module(m, uses, f"#[tool_router(router = router_{m}, vis = \"pub(crate)\")]", rmcp_tool)

def rmcp_router_lib(item: str) -> str:
    """The lib of an rmcp crate whose modules each add a router of `item`s
    (`tool` or `prompt`): the server, its routers added up."""
    routers = " + ".join(f"Self::router_{m}()" for m in range(MODULES))
    router = f"{item.capitalize()}Router"
    return f'''
use rmcp::handler::server::router::{item}::{router};
use rmcp::{{ServerHandler, {item}_handler}};

/// The server of the 100 {item}s.
#[derive(Clone)]
pub struct Server {{
    {item}_router: {router}<Self>,
}}

impl Server {{
    /// The server, its routers added up.
    pub fn new() -> Self {{
        Self {{ {item}_router: {routers} }}
    }}
}}

#[{item}_handler(router = self.{item}_router)]
impl ServerHandler for Server {{}}
'''


# Resources: even-numbered ones are templates (`notes://{topic}/n{i}`, the
# topic an argument), odd-numbered ones fixed URIs (`notes://fixed/n{i}`).
def resource_uri(i: int) -> str:
    return f"notes://{{topic}}/n{i}" if i % 2 == 0 else f"notes://fixed/n{i}"


def resource_fn(i: int, annotated: bool, receiver: bool = False) -> str:
    attr = f'#[mcp_resource(uri = "{resource_uri(i)}")]\n' if annotated else ""
    this = "&self, " if receiver else ""
    if i % 2 == 0:
        sig, body = f"{this}topic: String", f'format!("note {{}} of {{topic}}", {i}u32)'
    else:
        sig, body = this.rstrip(", "), f'format!("note {{}}", {i}u32)'
    return f'''
/// Returns note {i}.
{attr}pub fn note_{i}({sig}) -> String {{
    {body}
}}
'''


def rmcp_resource_module(m: int) -> str:
    """What an rmcp user writes: the functions, their listings, one arm a resource."""
    ids = [m * PER_MODULE + t for t in range(PER_MODULE)]
    fixed = [i for i in ids if i % 2]
    templates = [i for i in ids if i % 2 == 0]
    out = [
        "use rmcp::model::{Resource, ResourceTemplate};",
        "",
        "use crate::Server;",
        "",
        "impl Server {",
    ]
    out += ["    " + line for i in ids for line in resource_fn(i, False, True).splitlines()]
    out.append("}\n")
    out.append(f"/// The fixed resources of module {m}.\npub fn resources() -> Vec<Resource> {{\n    vec![")
    out += [f'        Resource::new("{resource_uri(i)}", "note_{i}").with_description("Returns note {i}."),'
            for i in fixed]
    out.append("    ]\n}\n")
    out.append(f"/// The resource templates of module {m}.\npub fn templates() -> Vec<ResourceTemplate> {{\n    vec![")
    out += [f'        ResourceTemplate::new("{resource_uri(i)}", "note_{i}").with_description("Returns note {i}."),'
            for i in templates]
    out.append("    ]\n}\n")
    out.append(f"impl Server {{\n    /// Reads `uri` if it is one of module {m}'s resources.\n"
               f"    pub(crate) fn read_{m}(&self, uri: &str) -> Option<String> {{\n        match uri {{")
    out += [f'            "{resource_uri(i)}" => return Some(self.note_{i}()),' for i in fixed]
    out.append("            _ => {}\n        }")
    for i in templates:
        out.append(f'''        if let Some(topic) = uri
            .strip_prefix("notes://")
            .and_then(|rest| rest.strip_suffix("/n{i}"))
            .filter(|topic| !topic.contains('/'))
        {{
            return Some(self.note_{i}(topic.to_string()));
        }}''')
    out.append("        None\n    }\n}\n")
    return "\n".join(out)


def rmcp_resource_lib() -> str:
    mods = range(MODULES)
    resources = "\n".join(f"        all.extend(m{m}::resources());" for m in mods)
    templates = "\n".join(f"        all.extend(m{m}::templates());" for m in mods)
    reads = "\n".join(f"            .or_else(|| self.read_{m}(&request.uri))" for m in mods)
    return f'''
use rmcp::model::{{
    ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResourceContents,
    ServerCapabilities, ServerConfig,
}};
use rmcp::service::RequestContext;
use rmcp::{{ErrorData, RoleServer, ServerHandler}};

/// The server of the 100 resources.
#[derive(Clone)]
pub struct Server;

impl ServerHandler for Server {{
    fn get_info(&self) -> ServerConfig {{
        ServerConfig::new(ServerCapabilities::builder().enable_resources().build())
    }}

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {{
        let mut all = Vec::new();
{resources}
        Ok(ListResourcesResult::with_all_items(all))
    }}

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {{
        let mut all = Vec::new();
{templates}
        Ok(ListResourceTemplatesResult::with_all_items(all))
    }}

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {{
        let text = None
{reads};
        match text {{
            Some(text) => Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into()),
            None => Err(ErrorData::resource_not_found(format!("no resource {{}}", request.uri), None)),
        }}
    }}
}}
'''


# Prompts: two arguments, one doc line, one user message.
def prompt_text(i: int) -> str:
    return f'format!("Review {{file}}, {{}}, prompt {{}}", focus.as_deref().unwrap_or("all of it"), {i}u32)'


def prompt_fn(i: int, annotated: bool) -> str:
    if annotated:
        return f'''
/// Reviews the file, prompt {i}.
#[mcp_prompt]
pub fn prompt_{i}(file: String, focus: Option<String>) -> Vec<PromptMessage> {{
    vec![PromptMessage::user({prompt_text(i)})]
}}
'''
    return f'''
/// Reviews the file, prompt {i}.
pub fn prompt_{i}(file: String, focus: Option<String>) -> Vec<String> {{
    vec![{prompt_text(i)}]
}}
'''


def rmcp_prompt(i: int) -> tuple[str, str]:
    """An rmcp user's prompt `i`: its arguments, and its method."""
    code = f'''
/// The arguments of prompt {i}.
#[derive(Deserialize, JsonSchema)]
pub struct Args{i} {{
    file: String,
    focus: Option<String>,
}}
'''
    method = f'''
    /// Reviews the file, prompt {i}.
    #[prompt]
    pub fn prompt_{i}(
        &self,
        Parameters(Args{i} {{ file, focus }}): Parameters<Args{i}>,
    ) -> Vec<PromptMessage> {{
        vec![PromptMessage::new_text(Role::User, {prompt_text(i)})]
    }}
'''
    return code, method


def rmcp_prompt_module(m: int) -> str:
    uses = [
        "use rmcp::handler::server::wrapper::Parameters;",
        "use rmcp::model::{PromptMessage, Role};",
        "use rmcp::{prompt, prompt_router};",
        "use schemars::JsonSchema;",
        "use serde::Deserialize;",
    ]
    return rmcp_router_module(m, uses, f"#[prompt_router(router = \"router_{m}\", vis = \"pub(crate)\")]", rmcp_prompt)

def module(items: str, kind: str, m: int) -> str:
    """The source of module `m` of the crate of `kind` for `items`."""
    ids = [m * PER_MODULE + t for t in range(PER_MODULE)]
    ours = kind == "ours"
    if items == "tools":
        if kind == "rmcp":
            return rmcp_module(m)
        parts = ["use ide_mcp_runtime::mcp_tool;" if ours else "", "use serde::Serialize;"]
        return "\n".join(parts + [free_fn(i, ours) for i in ids])
    if items == "resources":
        if kind == "rmcp":
            return rmcp_resource_module(m)
        return "\n".join(["use ide_mcp_runtime::mcp_resource;" if ours else ""]
                         + [resource_fn(i, ours) for i in ids])
    if kind == "rmcp":
        return rmcp_prompt_module(m)
    return "\n".join(["use ide_mcp_runtime::{PromptMessage, mcp_prompt};" if ours else ""]
                     + [prompt_fn(i, ours) for i in ids])


def write_crate(items: str, kind: str) -> Path:
    name = f"cost_{kind}" if items == "tools" else f"cost_{items}_{kind}"
    crate = WORK / name
    if crate.exists():
        shutil.rmtree(crate)
    (crate / "src").mkdir(parents=True)
    deps = {
        "plain": "serde = { version = \"1\", features = [\"derive\"] }\n",
        "ours": f"ide-mcp-runtime = {{ path = \"{ROOT / 'runtime'}\" }}\n"
        "serde = { version = \"1\", features = [\"derive\"] }\n",
        "rmcp": f"rmcp = {{ version = \"{RMCP}\", default-features = false, features = [\"macros\", \"server\"] }}\n"
        "schemars = \"1\"\n"
        "serde = { version = \"1\", features = [\"derive\"] }\n",
    }[kind]
    (crate / "Cargo.toml").write_text(f'''[package]
name = "{name}"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
{deps}''')
    lib = ["#![allow(missing_docs, dead_code)]"]
    for m in range(MODULES):
        lib.append(f"pub mod m{m};")
        (crate / "src" / f"m{m}.rs").write_text(module(items, kind, m))
    if kind == "rmcp":
        lib.append(rmcp_resource_lib() if items == "resources" else rmcp_router_lib(items.removesuffix("s")))
    (crate / "src" / "lib.rs").write_text("\n".join(lib) + "\n")
    # The workspace's versions of the shared dependencies; cargo adds the rest.
    shutil.copy(ROOT / "Cargo.lock", crate / "Cargo.lock")
    return crate


def cpu() -> float:
    """User + system time of the waited-for children (cargo and its rustc)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build(crate: Path, env: dict, offline: bool = True, cmd: str = "build") -> tuple:
    """Wall-clock and CPU seconds of `cargo <cmd>` in `crate`."""
    args = ["cargo", cmd, "--quiet"] + (["--offline"] if offline else [])
    start, start_cpu = time.perf_counter(), cpu()
    subprocess.run(args, cwd=crate, env=env, check=True)
    return time.perf_counter() - start, cpu() - start_cpu


def edit(items: str, crate: Path, n: int) -> None:
    """Changes the literal in the body of one item (a different one each time)."""
    m, t = EDITED
    i = m * PER_MODULE + t
    path = crate / "src" / f"m{m}.rs"
    if items == "tools":
        pattern = rf"(Reply{i} \{{\s*file_path,\s*line: line\.unwrap_or\()\d+(\))"
    else:  # the body's one `{i}u32` literal
        pattern = rf"(\b){i}(u32)" if n == 0 else rf"(\b){1000 + n - 1}(u32)"
    text, edits = re.subn(pattern, rf"\g<1>{1000 + n}\g<2>", path.read_text())
    assert edits == 1, edits
    path.write_text(text)


def measure(items: str, kinds: list, args, env: dict) -> None:
    """Builds the crates of `items` and prints the medians."""
    crates = {kind: write_crate(items, kind) for kind in kinds}
    for crate in crates.values():  # fetch, lock and build the dependencies once
        build(crate, env, offline=False)
        build(crate, env, cmd="check")
    one = {"tools": "one tool", "resources": "one resource", "prompts": "one prompt"}[items]
    steps = ("full build",
             "incremental build, " + ("one module touched" if args.touch else f"{one} edited"),
             "full check")
    data = {step: {k: [] for k in crates} for step in steps}
    load = [os.getloadavg()[0]]
    for run in range(args.runs):
        for kind, crate in crates.items():
            clean = ["cargo", "clean", "--quiet", "--offline", "-p", crate.name]
            subprocess.run(clean, cwd=crate, env=env, check=True)
            data[steps[0]][kind].append(build(crate, env))
            if args.touch:
                (crate / "src" / f"m{EDITED[0]}.rs").touch()
            else:
                edit(items, crate, run)
            data[steps[1]][kind].append(build(crate, env))
            subprocess.run(clean, cwd=crate, env=env, check=True)
            data[steps[2]][kind].append(build(crate, env, cmd="check"))
        load.append(os.getloadavg()[0])
    print(f"{items}: medians of {args.runs} runs, wall-clock s / CPU s (ratio of each to plain's);")
    print(f"1-minute load average during the runs: {min(load):.1f} to {max(load):.1f}")
    for step in steps:
        base = data[step].get("plain")
        base = [statistics.median(x[j] for x in base) for j in (0, 1)] if base else None
        print(f"{step}:")
        for kind in kinds:
            med = [statistics.median(x[j] for x in data[step][kind]) for j in (0, 1)]
            ratio = f" ({med[0] / base[0]:.2f}x / {med[1] / base[1]:.2f}x)" if base else ""
            runs = " ".join(f"{w:.2f}/{c:.2f}" for w, c in data[step][kind])
            print(f"    {kind:5} {med[0]:5.2f} / {med[1]:5.2f}{ratio}   runs: {runs}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default=",".join(KINDS), help="comma-separated: plain,ours,rmcp")
    parser.add_argument("--items", default="tools",
                        help="comma-separated: tools,resources,prompts (or all); one after the other")
    parser.add_argument("--touch", action="store_true",
                        help="incremental: touch the module instead of editing an item (no code changed)")
    args = parser.parse_args()
    kinds = [k for k in args.only.split(",") if k]
    items = ITEMS if args.items == "all" else [i for i in args.items.split(",") if i]
    assert all(i in ITEMS for i in items), items
    env = dict(os.environ, CARGO_TARGET_DIR=str(WORK / "target"))
    for i in items:
        measure(i, kinds, args, env)


if __name__ == "__main__":
    main()
