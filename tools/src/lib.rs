//! The Claude Code IDE read tools (being built).
