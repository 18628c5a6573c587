#!/usr/bin/env python3
"""Compile cost of `#[mcp_tool]`, side by side with rmcp's `#[tool_router]`.

Three generated crates of the same 100 tools (three arguments each:
`file_path: String, line: Option<u32>, verbose: bool`, one doc line, a
serializable reply struct), in ten modules of ten:

  - plain: the functions with no attribute (the baseline);
  - ours:  each function `#[mcp_tool(read_only)]`, against the workspace's runtime;
  - rmcp:  each tool a method in a `#[tool_router]` impl (one per module,
           the ten routers added up), `#[tool(annotations(read_only_hint =
           true))]`, its arguments a `#[derive(Deserialize, JsonSchema)]`
           struct taken as `Parameters<T>` (rmcp's way of taking several
           arguments), the reply returned as `ContentBlock::json` (JSON text,
           as ours), rmcp pinned below, from crates.io.

Measures, alternating the crates (plain ours rmcp plain ours rmcp ...), medians of:
  - full: `cargo clean -p <crate>`, then `cargo build` (dependencies already built);
  - incremental: one tool's body edited (a literal changed), then `cargo build`
    (`--touch`: its module touched instead, nothing changed);
  - full check: `cargo clean -p <crate>`, then `cargo check` (the front end alone).

Each as wall-clock and CPU time (user + system of cargo and rustc): on a
loaded machine the CPU time is the steadier of the two.

    python3 benches/compile_cost.py [--runs 5] [--only plain,ours] [--touch]

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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "compile-cost"
MODULES = 10
PER_MODULE = 10
# The latest rmcp that builds with the workspace's toolchain (rust-toolchain.toml).
RMCP = "=3.11.0"
EDITED = (3, 4)  # module and tool index (within the module) whose body is edited
KINDS = ("plain", "ours", "rmcp")


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


def rmcp_module(m: int) -> str:
    out = [
        "use rmcp::handler::server::wrapper::Parameters;",
        "use rmcp::model::ContentBlock;",
        "use schemars::JsonSchema;",
        "use rmcp::{ErrorData, tool, tool_router};",
        "use serde::{Deserialize, Serialize};",
        "",
        "use crate::Server;",
    ]
    methods = []
    for t in range(PER_MODULE):
        i = m * PER_MODULE + t
        out.append(f'''
/// The arguments of tool {i}.
#[derive(Deserialize, JsonSchema)]
pub struct Args{i} {{
    file_path: String,
    line: Option<u32>,
    verbose: bool,
}}
''' + reply(i))
        methods.append(f'''
    {doc(i)}
    #[tool(annotations(read_only_hint = true))]
    pub fn tool_{i}(
        &self,
        Parameters(Args{i} {{ file_path, line, verbose }}): Parameters<Args{i}>,
    ) -> Result<ContentBlock, ErrorData> {{
        ContentBlock::json(Reply{i} {{ file_path, line: line.unwrap_or({i}), verbose }})
    }}
''')
    out.append(f"#[tool_router(router = router_{m}, vis = \"pub(crate)\")]\nimpl Server {{")
    out.extend(methods)
    out.append("}\n")
    return "\n".join(out)


def rmcp_lib() -> str:
    routers = " + ".join(f"Self::router_{m}()" for m in range(MODULES))
    return f'''
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::{{ServerHandler, tool_handler}};

/// The server of the 100 tools.
#[derive(Clone)]
pub struct Server {{
    tool_router: ToolRouter<Self>,
}}

impl Server {{
    /// The server, its routers added up.
    pub fn new() -> Self {{
        Self {{ tool_router: {routers} }}
    }}
}}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {{}}
'''


def write_crate(kind: str) -> Path:
    name = f"cost_{kind}"
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
        if kind == "rmcp":
            body = rmcp_module(m)
        else:
            parts = ["use ide_mcp_runtime::mcp_tool;" if kind == "ours" else "", "use serde::Serialize;"]
            for t in range(PER_MODULE):
                parts.append(free_fn(m * PER_MODULE + t, kind == "ours"))
            body = "\n".join(parts)
        (crate / "src" / f"m{m}.rs").write_text(body)
    if kind == "rmcp":
        lib.append(rmcp_lib())
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


def edit(crate: Path, n: int) -> None:
    """Changes the literal in the body of one tool (a different one each time)."""
    m, t = EDITED
    i = m * PER_MODULE + t
    path = crate / "src" / f"m{m}.rs"
    text, edits = re.subn(
        rf"(Reply{i} \{{\s*file_path,\s*line: line\.unwrap_or\()\d+(\))",
        rf"\g<1>{1000 + n}\g<2>",
        path.read_text(),
    )
    assert edits == 1, edits
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default=",".join(KINDS), help="comma-separated: plain,ours,rmcp")
    parser.add_argument("--touch", action="store_true",
                        help="incremental: touch the module instead of editing a tool (no code changed)")
    args = parser.parse_args()
    kinds = [k for k in args.only.split(",") if k]
    env = dict(os.environ, CARGO_TARGET_DIR=str(WORK / "target"))
    crates = {kind: write_crate(kind) for kind in kinds}
    for crate in crates.values():  # fetch, lock and build the dependencies once
        build(crate, env, offline=False)
        build(crate, env, cmd="check")
    steps = ("full build",
             "incremental build, " + ("one module touched" if args.touch else "one tool edited"),
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
                edit(crate, run)
            data[steps[1]][kind].append(build(crate, env))
            subprocess.run(clean, cwd=crate, env=env, check=True)
            data[steps[2]][kind].append(build(crate, env, cmd="check"))
        load.append(os.getloadavg()[0])
    print(f"medians of {args.runs} runs, wall-clock s / CPU s (ratio of each to plain's);")
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


if __name__ == "__main__":
    main()
