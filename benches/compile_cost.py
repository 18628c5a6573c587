#!/usr/bin/env python3
"""Compile cost of `#[mcp_tool]`: a crate with 100 annotated functions vs the
same crate with the attribute removed, built against the workspace's runtime.

Measures, alternating the two crates (A B A B ...), medians of:
  - full build of the crate (its dependencies already built), and
  - incremental build after touching one of its ten modules.

    python3 benches/compile_cost.py [--runs 5]

The crates are generated under target/compile-cost/ and share one target dir.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "compile-cost"
MODULES = 10
PER_MODULE = 10


def tool(i: int, annotated: bool) -> str:
    attr = "#[mcp_tool(read_only)]\n" if annotated else ""
    return f'''
/// Returns the file name and line {i} of the request.
{attr}pub fn tool_{i}(file_path: String, line: Option<u32>, verbose: bool) -> Reply{i} {{
    Reply{i} {{ file_path, line: line.unwrap_or({i}), verbose }}
}}

/// The reply of tool {i}.
#[derive(Serialize)]
pub struct Reply{i} {{
    file_path: String,
    line: u32,
    verbose: bool,
}}
'''


def write_crate(name: str, annotated: bool) -> Path:
    crate = WORK / name
    if crate.exists():
        shutil.rmtree(crate)
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text(f'''[package]
name = "{name}"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
ide-mcp-runtime = {{ path = "{ROOT / 'runtime'}" }}
serde = {{ version = "1", features = ["derive"] }}
''')
    lib = ["#![allow(missing_docs, dead_code)]"]
    for m in range(MODULES):
        lib.append(f"pub mod m{m};")
        body = ["use ide_mcp_runtime::mcp_tool;" if annotated else "", "use serde::Serialize;"]
        for t in range(PER_MODULE):
            body.append(tool(m * PER_MODULE + t, annotated))
        (crate / "src" / f"m{m}.rs").write_text("\n".join(body))
    (crate / "src" / "lib.rs").write_text("\n".join(lib) + "\n")
    return crate


def build(crate: Path, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(["cargo", "build", "--quiet", "--offline"], cwd=crate, env=env, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    env = dict(os.environ, CARGO_TARGET_DIR=str(WORK / "target"))
    crates = {
        "annotated": write_crate("cost_annotated", True),
        "plain": write_crate("cost_plain", False),
    }
    for crate in crates.values():  # build (and lock) dependencies once
        shutil.copy(ROOT / "Cargo.lock", crate / "Cargo.lock")
        build(crate, env)
    full = {k: [] for k in crates}
    incremental = {k: [] for k in crates}
    for _ in range(args.runs):
        for kind, crate in crates.items():
            subprocess.run(["cargo", "clean", "--quiet", "-p", crate.name], cwd=crate, env=env, check=True)
            full[kind].append(build(crate, env))
            (crate / "src" / "m3.rs").touch()
            incremental[kind].append(build(crate, env))
    for label, data in (("full build", full), ("incremental (one module touched)", incremental)):
        a = statistics.median(data["annotated"])
        p = statistics.median(data["plain"])
        print(f"{label}: annotated {a:.2f} s, plain {p:.2f} s, ratio {a / p:.2f}x (median of {args.runs})")


if __name__ == "__main__":
    main()
