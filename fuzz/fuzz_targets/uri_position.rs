//! Arbitrary text through the URI and UTF-16 position helpers; see `src/lib.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ide_mcp_fuzz::uri_position(data));
