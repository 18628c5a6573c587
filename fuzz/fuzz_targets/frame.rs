//! Bytes → `Session::handle` → every answer checked; see `src/lib.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ide_mcp_fuzz::frame(data));
