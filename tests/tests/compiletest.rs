//! The compile-time contract of `#[mcp_tool]`, `#[mcp_resource]` and
//! `#[mcp_prompt]`: every misuse fails with the message pinned in
//! `tests/ui/*.stderr`, every supported shape compiles and runs
//! (`tests/ui/pass/`).
//!
//! Regenerate with `TRYBUILD=overwrite cargo test -p ide-mcp-tests --test
//! compiletest` and review each `.stderr` like code. The toolchain is pinned
//! (`rust-toolchain.toml`) because rustc's wording changes between releases.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
    t.pass("ui/pass/*.rs");
}
