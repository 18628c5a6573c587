//! One message through the one-pass reading of a `tools/call` and the general parser; see `src/lib.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ide_mcp_fuzz::jsonrpc(data));
