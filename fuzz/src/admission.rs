//! The `admission` target: arbitrary header lists through the gate both
//! listeners run (`ide_mcp_runtime::transport::gate`), against a reference
//! written plainly from the rules.

use ide_mcp_runtime::transport::gate::{Credential, Gate, Hosts, Refused};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";
const PORT: u16 = 8123;
/// The origin a configured listener admits.
const ALLOWED_ORIGIN: &str = "https://allowed.example";
/// Every `Host` a loopback listener on [`PORT`] admits, lower-cased.
const LOOPBACK_HOSTS: [&str; 6] = [
    "127.0.0.1",
    "127.0.0.1:8123",
    "localhost",
    "localhost:8123",
    "[::1]",
    "[::1]:8123",
];

/// The admission target. The first byte picks the listener: bit 0 its
/// credential (the IDE header, or a bearer token), bit 1 its hosts
/// (loopback on port 8123, or any), bit 2 whether `https://allowed.example`
/// is a configured origin. The rest, split at `\n`, is one header a line:
/// its name before the first `:`, its value after it with the spaces
/// around it dropped (as an HTTP parser does), a trailing `\r` ignored.
///
/// Properties: nothing panics; the verdict is the reference's (the headers
/// counted by their lower-cased names, the admitted hosts listed in full,
/// the token compared as bytes); and it stays the same when the names are
/// upper-cased or the headers come in the reverse order.
pub fn admission(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let origins = [ALLOWED_ORIGIN.to_owned()];
    let gate = Gate {
        token: TOKEN,
        credential: if flags & 1 == 0 {
            Credential::IDE
        } else {
            Credential::BEARER
        },
        hosts: if flags & 2 == 0 {
            Hosts::Loopback { port: PORT }
        } else {
            Hosts::Any
        },
        origins: if flags & 4 == 0 { &[] } else { &origins },
    };
    let headers: Vec<(Vec<u8>, &[u8])> = rest.split(|&b| b == b'\n').map(header).collect();
    let verdict = gate.check(headers.iter().map(|(n, v)| (n.as_slice(), *v)));
    assert_eq!(verdict, reference(&gate, &headers), "{:?}", lossy(&headers));
    let upper = headers.iter().map(|(n, v)| (n.to_ascii_uppercase(), *v));
    let upper: Vec<(Vec<u8>, &[u8])> = upper.collect();
    assert_eq!(
        gate.check(upper.iter().map(|(n, v)| (n.as_slice(), *v))),
        verdict,
        "names upper-cased"
    );
    assert_eq!(
        gate.check(headers.iter().rev().map(|(n, v)| (n.as_slice(), *v))),
        verdict,
        "headers reversed"
    );
}

/// One line as a header: name and value.
fn header(line: &[u8]) -> (Vec<u8>, &[u8]) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let (name, value) = match line.iter().position(|&b| b == b':') {
        Some(colon) => (&line[..colon], &line[colon + 1..]),
        None => (line, &b""[..]),
    };
    let spaces: &[u8] = b" \t";
    let start = value
        .iter()
        .position(|b| !spaces.contains(b))
        .unwrap_or(value.len());
    let end = value
        .iter()
        .rposition(|b| !spaces.contains(b))
        .map_or(start, |i| i + 1);
    (name.to_vec(), &value[start..end])
}

/// The verdict by the rules, read plainly: each header the gate reads at
/// most once; `Host` one of [`LOOPBACK_HOSTS`] in any case (when the
/// listener is on loopback); no `Origin` but a configured one; the
/// listener's credential header once, with the token (after `Bearer ` in
/// any case, spaces around the token dropped, for a bearer token).
fn reference(gate: &Gate<'_>, headers: &[(Vec<u8>, &[u8])]) -> Result<(), Refused> {
    let values = |name: &str| -> Vec<&[u8]> {
        headers
            .iter()
            .filter(|(n, _)| n.to_ascii_lowercase() == name.as_bytes())
            .map(|(_, v)| *v)
            .collect()
    };
    let hosts = values("host");
    if hosts.len() > 1 {
        return Err(Refused::DuplicateHost);
    }
    let loopback = matches!(gate.hosts, Hosts::Loopback { .. });
    let listed = |h: &[u8]| {
        let h = h.to_ascii_lowercase();
        LOOPBACK_HOSTS.iter().any(|l| l.as_bytes() == h)
    };
    if loopback && !hosts.first().is_some_and(|h| listed(h)) {
        return Err(Refused::ForeignHost);
    }
    let origins = values("origin");
    if origins.len() > 1 {
        return Err(Refused::DuplicateOrigin);
    }
    if let Some(origin) = origins.first()
        && !gate.origins.iter().any(|o| o.as_bytes() == *origin)
    {
        return Err(Refused::Origin);
    }
    let credentials = values(gate.credential.header);
    if credentials.len() > 1 {
        return Err(Refused::DuplicateCredential);
    }
    let value = credentials.first().ok_or(Refused::NoCredential)?;
    let token = if gate.credential.scheme.is_some() {
        let lower = value.to_ascii_lowercase();
        if !lower.starts_with(b"bearer ") {
            return Err(Refused::NoCredential);
        }
        value[7..].trim_ascii()
    } else {
        value
    };
    if token == TOKEN.as_bytes() {
        Ok(())
    } else {
        Err(Refused::WrongCredential)
    }
}

fn lossy(headers: &[(Vec<u8>, &[u8])]) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(n, v)| {
            (
                String::from_utf8_lossy(n).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            )
        })
        .collect()
}
