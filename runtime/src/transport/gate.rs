//! The admission check every listener runs on a request's headers before it
//! reads anything else: `Host` (no DNS rebinding), `Origin` (no browser
//! page) and the token, decided once, over the raw header bytes, for the
//! IDE WebSocket and Streamable HTTP alike. Each listener only words the
//! refusal in its own way ([`Refused`] is a value, not a response) and names
//! the header its clients carry the token in ([`Credential`]).
//!
//! In 2025 the IDE servers of the official extensions accepted connections
//! from any web page (CVE-2025-52882); this check is why ours does not.
//!
//! Each header the check reads must come at most once: with two, which one
//! a reader takes is a guess (a proxy reading the first and a server reading
//! the last disagree), so a duplicate is refused before anything is
//! compared, the right token twice included.

use std::fmt;

/// The header the Claude Code CLI carries the IDE's token in (PROTOCOL.md),
/// matched in any case, as every HTTP header name is.
pub const AUTH_HEADER: &str = "x-claude-code-ide-authorization";

/// How a listener's clients show the token: the header that carries it, and
/// the scheme before the token in its value, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Credential {
    /// The header's name, lower-case (matched in any case).
    pub header: &'static str,
    /// The scheme before the token (`Bearer`), matched in any case and
    /// followed by a space, and named as written in a 401's challenge;
    /// `None` when the value is the token alone.
    pub scheme: Option<&'static str>,
}

impl Credential {
    /// The IDE WebSocket's: the token alone in [`AUTH_HEADER`].
    pub const IDE: Self = Self {
        header: AUTH_HEADER,
        scheme: None,
    };

    /// Streamable HTTP's: `Authorization: Bearer <token>`.
    pub const BEARER: Self = Self {
        header: "authorization",
        scheme: Some("Bearer"),
    };

    /// The Copilot CLI's IDE connection's: `Authorization: Nonce <token>`
    /// (the header its lockfile names, copied into every request).
    pub const NONCE: Self = Self {
        header: "authorization",
        scheme: Some("Nonce"),
    };

    /// The token in `value`: the value itself, or what follows the scheme
    /// and a space (surrounding spaces dropped); `None` for another scheme.
    fn token<'v>(&self, value: &'v [u8]) -> Option<&'v [u8]> {
        let Some(scheme) = self.scheme else {
            return Some(value);
        };
        let (named, rest) = value.split_at_checked(scheme.len())?;
        let token = rest.strip_prefix(b" ")?;
        named
            .eq_ignore_ascii_case(scheme.as_bytes())
            .then(|| token.trim_ascii())
    }
}

/// Which `Host` values a listener admits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hosts {
    /// A listener on loopback: `127.0.0.1`, `localhost` (in any ASCII
    /// case) or `[::1]`, alone or with this port. Any other name is a page
    /// of another site whose DNS name was rebound to 127.0.0.1.
    Loopback {
        /// The port served.
        port: u16,
    },
    /// A listener on a Unix socket (no port): `127.0.0.1`, `localhost`
    /// (in any ASCII case) or `[::1]` without a port, as a client of
    /// `http://localhost/mcp` over the socket sends it.
    Local,
    /// A listener on another address (its token alone guards it): any
    /// `Host`, or none.
    Any,
}

/// What a listener admits: the one check both listeners run.
#[derive(Clone, Copy, Debug)]
pub struct Gate<'a> {
    /// The token clients must show, compared in constant time.
    pub token: &'a str,
    /// Where clients show it.
    pub credential: Credential,
    /// The `Host` values admitted.
    pub hosts: Hosts,
    /// The `Origin` values admitted, exactly as written; any other `Origin`
    /// (only browsers send one) is refused. Empty unless configured.
    pub origins: &'a [String],
}

/// Why a request was refused, in the order the check looks: `Host`,
/// `Origin`, then the token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// `Host` came more than once.
    DuplicateHost,
    /// `Host` is missing or names another host or port.
    ForeignHost,
    /// `Origin` came more than once.
    DuplicateOrigin,
    /// An `Origin` not configured: a browser page.
    Origin,
    /// The credential header came more than once.
    DuplicateCredential,
    /// No credential header, or one of another scheme.
    NoCredential,
    /// A credential whose token is not the server's.
    WrongCredential,
}

impl Refused {
    /// The HTTP status of the refusal: 403 for a browser or a rebound name,
    /// 401 for the token.
    pub fn status(self) -> u16 {
        match self {
            Self::DuplicateHost | Self::ForeignHost | Self::DuplicateOrigin | Self::Origin => 403,
            Self::DuplicateCredential | Self::NoCredential | Self::WrongCredential => 401,
        }
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::DuplicateHost => "two `Host` headers",
            Self::ForeignHost => "a foreign or missing `Host` (DNS rebinding?)",
            Self::DuplicateOrigin => "two `Origin` headers",
            Self::Origin => "an `Origin` header (a browser page)",
            Self::DuplicateCredential => "two credential headers",
            Self::NoCredential => "no token",
            Self::WrongCredential => "a wrong token",
        })
    }
}

/// The values of one header the check reads: the first, and whether more
/// came.
#[derive(Clone, Copy, Debug, Default)]
struct Seen<'h> {
    first: Option<&'h [u8]>,
    repeated: bool,
}

impl<'h> Seen<'h> {
    fn push(&mut self, value: &'h [u8]) {
        if self.first.is_none() {
            self.first = Some(value);
        } else {
            self.repeated = true;
        }
    }
}

impl Gate<'_> {
    /// Admits or refuses a request by its headers, given as (name, value)
    /// bytes in the order they came (names in any case, values as the
    /// parser left them). The first failing check answers: `Host`, then
    /// `Origin`, then the token.
    pub fn check<'h, I>(&self, headers: I) -> Result<(), Refused>
    where
        I: IntoIterator<Item = (&'h [u8], &'h [u8])>,
    {
        let refused = self.decide(headers);
        if let Err(refused) = refused {
            tracing::warn!("request refused: {refused}");
        }
        refused
    }

    fn decide<'h, I>(&self, headers: I) -> Result<(), Refused>
    where
        I: IntoIterator<Item = (&'h [u8], &'h [u8])>,
    {
        let (mut host, mut origin, mut credential) =
            (Seen::default(), Seen::default(), Seen::default());
        for (name, value) in headers {
            if name.eq_ignore_ascii_case(b"host") {
                host.push(value);
            } else if name.eq_ignore_ascii_case(b"origin") {
                origin.push(value);
            } else if name.eq_ignore_ascii_case(self.credential.header.as_bytes()) {
                credential.push(value);
            }
        }
        if host.repeated {
            return Err(Refused::DuplicateHost);
        }
        let port = match self.hosts {
            Hosts::Loopback { port } => Some(Some(port)),
            Hosts::Local => Some(None),
            Hosts::Any => None,
        };
        if let Some(port) = port
            && !host.first.is_some_and(|h| loopback_host(h, port))
        {
            return Err(Refused::ForeignHost);
        }
        if origin.repeated {
            return Err(Refused::DuplicateOrigin);
        }
        if let Some(origin) = origin.first
            && !self.origins.iter().any(|o| o.as_bytes() == origin)
        {
            return Err(Refused::Origin);
        }
        if credential.repeated {
            // Refused before any compare: the answer says nothing of either.
            return Err(Refused::DuplicateCredential);
        }
        let given = credential
            .first
            .and_then(|value| self.credential.token(value))
            .ok_or(Refused::NoCredential)?;
        if crate::discovery::token_matches(given, self.token.as_bytes()) {
            Ok(())
        } else {
            Err(Refused::WrongCredential)
        }
    }
}

/// `127.0.0.1`, `localhost` (any ASCII case) or `[::1]`, alone or followed
/// by `:` and `port` in plain decimal (alone only when there is no port).
fn loopback_host(host: &[u8], port: Option<u16>) -> bool {
    let (name, given_port) = match host.iter().rposition(|&b| b == b':') {
        // The colons inside `[::1]` are not a port's.
        Some(colon) if !host.ends_with(b"]") => (&host[..colon], Some(&host[colon + 1..])),
        _ => (host, None),
    };
    let name_ok =
        name == b"127.0.0.1" || name == b"[::1]" || name.eq_ignore_ascii_case(b"localhost");
    name_ok && given_port.is_none_or(|given| port.is_some_and(|port| is_port(given, port)))
}

/// Whether `text` is `port` written in decimal, without sign, spaces or
/// leading zeros.
fn is_port(text: &[u8], port: u16) -> bool {
    let plain = (1..=5).contains(&text.len())
        && text.iter().all(u8::is_ascii_digit)
        && (text.len() == 1 || text[0] != b'0');
    plain && text.iter().fold(0u32, |n, d| n * 10 + u32::from(d - b'0')) == u32::from(port)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

    fn gate(credential: Credential) -> Gate<'static> {
        Gate {
            token: TOKEN,
            credential,
            hosts: Hosts::Loopback { port: 8123 },
            origins: &[],
        }
    }

    fn check(gate: &Gate<'_>, headers: &[(&str, &str)]) -> Result<(), Refused> {
        gate.check(headers.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())))
    }

    #[test]
    fn hosts_name_loopback_and_this_port_only() {
        for ok in [
            "127.0.0.1:8123",
            "127.0.0.1",
            "localhost:8123",
            "LocalHost",
            "LOCALHOST:8123",
            "[::1]",
            "[::1]:8123",
        ] {
            assert!(loopback_host(ok.as_bytes(), Some(8123)), "{ok}");
        }
        for bad in [
            "127.0.0.1:8124",
            "127.0.0.1:+8123",
            "127.0.0.1:08123",
            "127.0.0.1: 8123",
            "127.0.0.1:",
            "127.0.0.1:8123:8123",
            "evil.example:8123",
            "localhost.evil:8123",
            "localhost.",
            "[::1]:",
            "[::1]8123",
            "::1",
            "[::ffff:127.0.0.1]:8123",
            "127.0.0.2",
            "",
            ":",
        ] {
            assert!(!loopback_host(bad.as_bytes(), Some(8123)), "{bad}");
        }
        for ok in ["localhost", "LOCALHOST", "127.0.0.1", "[::1]"] {
            assert!(loopback_host(ok.as_bytes(), None), "{ok}");
        }
        for bad in ["localhost:80", "localhost:0", "127.0.0.1:1", "evil", ""] {
            assert!(!loopback_host(bad.as_bytes(), None), "{bad}");
        }
        assert!(is_port(b"0", 0));
        assert!(is_port(b"65535", 65535));
        assert!(!is_port(b"", 0));
    }

    #[test]
    fn each_listener_reads_its_own_credential() {
        let ide = gate(Credential::IDE);
        let bearer = gate(Credential::BEARER);
        let host = ("Host", "127.0.0.1:8123");
        let bearer_token = format!("Bearer {TOKEN}");
        assert_eq!(
            check(&ide, &[host, ("X-Claude-Code-IDE-Authorization", TOKEN)]),
            Ok(())
        );
        assert_eq!(
            check(&bearer, &[host, ("authorization", &bearer_token)]),
            Ok(())
        );
        assert_eq!(
            check(
                &bearer,
                &[host, ("Authorization", &format!("bearer  {TOKEN} "))]
            ),
            Ok(())
        );
        // Each listener's header means nothing to the other.
        assert_eq!(
            check(&ide, &[host, ("Authorization", TOKEN)]),
            Err(Refused::NoCredential)
        );
        assert_eq!(
            check(&bearer, &[host, (AUTH_HEADER, TOKEN)]),
            Err(Refused::NoCredential)
        );
        assert_eq!(
            check(&bearer, &[host, ("Authorization", TOKEN)]),
            Err(Refused::NoCredential)
        );
        assert_eq!(
            check(
                &bearer,
                &[host, ("Authorization", &format!("Basic {TOKEN}"))]
            ),
            Err(Refused::NoCredential)
        );
        assert_eq!(
            check(&ide, &[host, (AUTH_HEADER, &bearer_token)]),
            Err(Refused::WrongCredential)
        );
        assert_eq!(
            check(&ide, &[host, (AUTH_HEADER, "")]),
            Err(Refused::WrongCredential)
        );
        assert_eq!(
            check(&bearer, &[host, ("authorization", "Bearer x")]),
            Err(Refused::WrongCredential)
        );
    }

    #[test]
    fn a_unix_socket_admits_localhost_and_the_nonce() {
        let g = Gate {
            hosts: Hosts::Local,
            ..gate(Credential::NONCE)
        };
        let nonce = format!("Nonce {TOKEN}");
        let right = ("Authorization", nonce.as_str());
        assert_eq!(check(&g, &[("Host", "localhost"), right]), Ok(()));
        assert_eq!(
            check(&g, &[("Host", "localhost:8123"), right]),
            Err(Refused::ForeignHost)
        );
        assert_eq!(check(&g, &[right]), Err(Refused::ForeignHost));
        let bearer = format!("Bearer {TOKEN}");
        assert_eq!(
            check(&g, &[("Host", "localhost"), ("Authorization", &bearer)]),
            Err(Refused::NoCredential)
        );
        assert_eq!(
            check(&g, &[("Host", "localhost"), ("Authorization", "Nonce x")]),
            Err(Refused::WrongCredential)
        );
    }

    #[test]
    fn the_first_failing_check_answers() {
        let g = gate(Credential::IDE);
        let host = ("Host", "localhost");
        let right = (AUTH_HEADER, TOKEN);
        let wrong = (AUTH_HEADER, "0123456789abcdef0123456789abcdeF");
        let origin = ("Origin", "http://localhost:8123");
        assert_eq!(
            check(&g, &[host, host, origin, right, right]),
            Err(Refused::DuplicateHost)
        );
        assert_eq!(
            check(&g, &[("Host", "evil"), origin, right, right]),
            Err(Refused::ForeignHost)
        );
        assert_eq!(check(&g, &[origin, right]), Err(Refused::ForeignHost));
        assert_eq!(
            check(&g, &[host, origin, origin, right]),
            Err(Refused::DuplicateOrigin)
        );
        assert_eq!(check(&g, &[host, origin, wrong]), Err(Refused::Origin));
        assert_eq!(
            check(&g, &[host, right, wrong]),
            Err(Refused::DuplicateCredential)
        );
        assert_eq!(
            check(&g, &[host, right, right]),
            Err(Refused::DuplicateCredential)
        );
        assert_eq!(check(&g, &[host]), Err(Refused::NoCredential));
        assert_eq!(check(&g, &[host, wrong]), Err(Refused::WrongCredential));
        assert_eq!(check(&g, &[host, right]), Ok(()));
    }

    #[test]
    fn configured_origins_and_any_host() {
        let origins = ["https://inspector.example".to_owned()];
        let g = Gate {
            hosts: Hosts::Any,
            origins: &origins,
            ..gate(Credential::IDE)
        };
        let right = (AUTH_HEADER, TOKEN);
        assert_eq!(check(&g, &[right]), Ok(()));
        assert_eq!(check(&g, &[("Host", "evil.example"), right]), Ok(()));
        assert_eq!(
            check(&g, &[("Host", "a"), ("Host", "a"), right]),
            Err(Refused::DuplicateHost)
        );
        assert_eq!(
            check(&g, &[("Origin", "https://inspector.example"), right]),
            Ok(())
        );
        assert_eq!(
            check(&g, &[("Origin", "https://Inspector.example"), right]),
            Err(Refused::Origin)
        );
    }
}
