//! Shared helpers of the ide-mcp test suites.
