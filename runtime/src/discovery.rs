//! IDE discovery: how the `claude` CLI finds a server and proves it may use
//! it — the auth token, the lockfile that carries it, and what `/ide` shows
//! (the IDE's name and workspace folders). Apart from the WebSocket server,
//! which only checks what this publishes. [`find`] is the client's side:
//! which IDE a client in a directory uses.

use std::io;
use std::path::Path;

use crate::lockfile::{self, Lockfile, LockfileContent};

pub mod find;

pub use find::{FoundIde, find_ides};

/// The shortest auth token a host may choose itself.
pub const MIN_TOKEN_CHARS: usize = 32;

/// A fresh auth token: 128 bits from the OS RNG, written as a UUID
/// (`8-4-4-4-12` hex digits). Not a v4 UUID: all 128 bits are random, where
/// v4 fixes six of them.
pub fn fresh_token() -> io::Result<String> {
    let mut bytes = [0_u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|err| io::Error::other(format!("the OS RNG failed: {err}")))?;
    Ok(uuid::Uuid::from_bytes(bytes).hyphenated().to_string())
}

/// The token to serve with: `given` when it has at least
/// [`MIN_TOKEN_CHARS`] characters, a [`fresh_token`] when `None`.
pub fn choose_token(given: Option<&str>) -> io::Result<String> {
    match given {
        Some(token) if token.len() >= MIN_TOKEN_CHARS => Ok(token.to_owned()),
        Some(_) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "an auth token given in `WsOptions` must have at least {MIN_TOKEN_CHARS} characters"
            ),
        )),
        None => fresh_token(),
    }
}

/// What the CLI's `/ide` lists and which of its sessions see the server.
#[derive(Clone, Copy, Debug)]
pub struct IdeIdentity<'a> {
    /// The IDE's name, shown by `/ide`.
    pub ide_name: &'a str,
    /// The folders whose CLI sessions see this server (absolute paths).
    pub workspace_folders: &'a [String],
}

/// Writes the lockfile announcing a server on `port` with `token` to the
/// CLI, in `config_dir` (else [`lockfile::default_config_dir`]). The server
/// keeps the returned [`Lockfile`] while it serves; dropping it removes the
/// file.
pub fn publish(
    identity: IdeIdentity<'_>,
    config_dir: Option<&Path>,
    port: u16,
    token: &str,
) -> io::Result<Lockfile> {
    let dir = config_dir
        .map(Path::to_path_buf)
        .or_else(lockfile::default_config_dir)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "no home directory and no CLAUDE_CONFIG_DIR for the lockfile",
            )
        })?;
    let content = LockfileContent {
        pid: std::process::id(),
        workspace_folders: identity.workspace_folders.to_vec(),
        ide_name: identity.ide_name.to_owned(),
        transport: "ws".to_owned(),
        running_in_windows: cfg!(windows),
        auth_token: token.to_owned(),
    };
    Lockfile::create(&dir, port, &content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fresh_or_long_enough() {
        let a = fresh_token().unwrap();
        assert_eq!(a.len(), 36);
        assert_ne!(a, fresh_token().unwrap());
        assert_eq!(choose_token(Some(&"t".repeat(32))).unwrap(), "t".repeat(32));
        let err = choose_token(Some("short")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(choose_token(None).unwrap().len(), 36);
    }
}

/// Whether `given` is `token`, compared in constant time by `subtle`'s
/// audited `ct_eq` on the slices: how long the check takes does not reveal
/// how much of a guessed token was right. Only a length mismatch returns
/// early, and the length of a token is no secret.
///
/// One compare per HTTP request and per WebSocket upgrade; its cost
/// against a request's is in BENCHMARKS.md § 6b.
pub(crate) fn token_matches(given: &[u8], token: &[u8]) -> bool {
    use subtle::ConstantTimeEq as _;
    bool::from(given.ct_eq(token))
}

#[cfg(test)]
mod token_tests {
    #[test]
    fn tokens_match_only_when_equal() {
        let token = b"0123456789abcdef0123456789abcdef0123";
        assert!(super::token_matches(token, token));
        for i in 0..token.len() {
            let mut wrong = *token;
            wrong[i] ^= 1;
            assert!(!super::token_matches(&wrong, token), "byte {i}");
        }
        assert!(!super::token_matches(&token[..35], token));
        assert!(!super::token_matches(b"", token));
        assert!(super::token_matches(b"", b""));
    }
}
