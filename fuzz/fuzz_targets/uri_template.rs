//! Templates, URIs and values through URI-template matching; see `src/uri_template.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ide_mcp_fuzz::uri_template(data));
