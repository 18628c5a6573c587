//! The headless ide-mcp host (being built).
fn main() {}
