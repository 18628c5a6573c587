//! Header lists through the gate both listeners run, against a plain reference; see `src/admission.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ide_mcp_fuzz::admission(data));
