//! A `tools/call` read as clients write it, in one pass over its bytes
//! without serde: `jsonrpc`, `id` and `method` before `params`, plain
//! strings where the envelope and the call's params are read. Everything
//! the pass skips (arguments, unknown members, `_meta`'s client info) is
//! still checked to be valid JSON ([`Cursor`]).
//!
//! It reads less than serde would accept: anything else (escapes in a
//! member name or in the values it reads, a member twice, `params` before
//! `method`, a number or an id it is unsure of, deep nesting) makes it give
//! up with `None`, and the caller reads the message with the general
//! parser, which also says what is wrong with it. It never accepts what
//! that parser refuses (a property test checks the two against each other,
//! and so does the fuzz target `jsonrpc`). What it buys over serde: see
//! BENCHMARKS.md § 1.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::call::CallParams;
use crate::era::META_PROTOCOL_VERSION;
use crate::json_cursor::Cursor;
use crate::jsonrpc::RequestId;
use crate::tool::Arguments;

/// The id and params of `text` when it is a `tools/call` request of the
/// common shape; `None` for anything else.
pub(super) fn tools_call(text: &str) -> Option<(RequestId<'_>, CallParams<'_>)> {
    let mut at = Cursor::new(text);
    let (mut jsonrpc, mut id, mut method, mut call) = (false, None, false, None);
    at.object(|at, key| {
        match key {
            "jsonrpc" if !jsonrpc => {
                jsonrpc = true;
                at.str_is("2.0")?.then_some(())
            }
            "id" if id.is_none() => {
                id = Some(request_id(at)?);
                Some(())
            }
            "method" if !method => {
                method = true;
                at.str_is("tools/call")?.then_some(())
            }
            // `params` after `method`, as the general parser reads it.
            "params" if method && call.is_none() => {
                call = Some(call_params(at)?);
                Some(())
            }
            // A response's members, a member twice, `params` first.
            "jsonrpc" | "id" | "method" | "params" | "result" | "error" => None,
            _ => at.skip_value(),
        }
    })?;
    if !at.at_end() || !jsonrpc {
        return None;
    }
    Some((id?, call?))
}

/// A request id: a plain string or an integer, as written.
fn request_id<'a>(at: &mut Cursor<'a>) -> Option<RequestId<'a>> {
    let string = at.peek()? == b'"';
    let start = at.pos();
    if string {
        at.plain_str()?;
    } else {
        at.skip_number()?;
    }
    // A string including its quotes.
    Some(RequestId::from_json(at.since(start)))
}

/// A `tools/call`'s params.
fn call_params<'a>(at: &mut Cursor<'a>) -> Option<CallParams<'a>> {
    at.skip_ws();
    let start = at.pos();
    let (mut name, mut arguments, mut meta) = (None, None, None);
    at.object(|at, key| match key {
        "name" if name.is_none() => {
            name = Some(at.plain_str()?);
            Some(())
        }
        "arguments" if arguments.is_none() => {
            // Checked as they are skipped.
            arguments = Some(at.or_null(|at| at.raw_text().map(Arguments::checked))?);
            Some(())
        }
        "_meta" if meta.is_none() => {
            meta = Some(at.or_null(call_meta)?);
            Some(())
        }
        "name" | "arguments" | "_meta" => None,
        _ => at.skip_value(),
    })?;
    let (progress_token, version) = meta.flatten().unwrap_or_default();
    Some(CallParams::new(
        at.since(start),
        Cow::Borrowed(name?),
        arguments.flatten(),
        progress_token,
        version,
    ))
}

/// `_meta`: its progress token and protocol version.
fn call_meta<'a>(at: &mut Cursor<'a>) -> Option<(Option<&'a RawValue>, Option<&'a str>)> {
    let (mut token, mut version) = (None, None);
    at.object(|at, key| match key {
        "progressToken" if token.is_none() => {
            token = Some(at.or_null(Cursor::raw_value)?);
            Some(())
        }
        // `null` stays visible: not a string, not no version.
        META_PROTOCOL_VERSION if version.is_none() => {
            version = Some(at.raw_text()?);
            Some(())
        }
        "progressToken" | META_PROTOCOL_VERSION => None,
        _ => at.skip_value(),
    })?;
    Some((token.flatten(), version))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use crate::json_cursor::tests::value;
    use crate::tool::Arguments;

    fn general(text: &str) -> String {
        crate::request::general_reading(text)
    }

    fn one_pass(text: &str) -> String {
        crate::request::one_pass_reading(text)
    }

    #[test]
    fn the_common_shape_is_read_in_one_pass() {
        let text = r#"{"jsonrpc":"2.0","id":"a\"","method":"tools/call","params":{"name":"t","arguments":{"s":"x\n\u00e9","n":[1,-2.5e3,true,null,{}]},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"0"}}},"extra":[]}"#;
        // An id with an escape: read by the general parser.
        assert!(super::tools_call(text).is_none());
        let text = text.replace(r#""a\"""#, r#" "a" "#);
        let (id, call) = super::tools_call(&text).expect("the common shape");
        assert_eq!(id.as_json(), r#""a""#);
        assert_eq!(
            (
                &*call.name,
                call.arguments.map(Arguments::json),
                call.meta_json()
            ),
            (
                "t",
                Some(r#"{"s":"x\n\u00e9","n":[1,-2.5e3,true,null,{}]}"#),
                (Some("7"), Some(r#""2026-07-28""#))
            )
        );
        assert_eq!(one_pass(&text), general(&text));
    }

    /// `usual` twelve times, then each of `others` once: the values a
    /// member is drawn from, mostly the usual one.
    fn mostly(usual: &'static str, others: &[&'static str]) -> Vec<&'static str> {
        std::iter::repeat_n(usual, 12)
            .chain(others.iter().copied())
            .collect()
    }

    fn member(name: &'static str, values: Vec<&'static str>) -> impl Strategy<Value = String> {
        prop::sample::select(values).prop_map(move |v| format!("\"{name}\":{v}"))
    }

    /// `_meta`: the progress token, the protocol version, client info.
    fn meta() -> impl Strategy<Value = String> {
        prop_oneof![
            1 => Just("null".to_owned()),
            1 => Just("7".to_owned()),
            8 => (
                prop::option::weighted(0.5, member("progressToken", vec!["1", "\"p\"", "null", "{}"])),
                prop::option::weighted(
                    0.8,
                    member(
                        "io.modelcontextprotocol/protocolVersion",
                        vec!["\"2026-07-28\"", "\"2026-07-28\"", "\"2025-11-25\"", "null", "3"]
                    )
                ),
                prop::option::weighted(
                    0.7,
                    value().prop_map(|v| format!("\"io.modelcontextprotocol/clientInfo\":{v}"))
                ),
                prop::bool::weighted(0.1),
            )
                .prop_map(|(token, version, info, twice)| {
                    let mut members: Vec<_> = [token, version, info].into_iter().flatten().collect();
                    if twice && let Some(first) = members.first().cloned() {
                        members.push(first);
                    }
                    format!("{{{}}}", members.join(","))
                }),
        ]
    }

    /// A `tools/call`'s params and their variations.
    fn params() -> impl Strategy<Value = String> {
        let arguments = || value().prop_map(|v| format!("\"arguments\":{v}"));
        let call = (
            member(
                "name",
                mostly("\"getDiagnostics\"", &["\"t\\u0041\"", "3", "null"]),
            ),
            prop::option::weighted(0.8, arguments()),
            prop::option::weighted(0.7, meta().prop_map(|m| format!("\"_meta\":{m}"))),
            prop::option::weighted(0.2, value().prop_map(|v| format!("\"other\":{v}"))),
            any::<bool>(),
        )
            .prop_map(|(name, arguments, meta, other, reversed)| {
                let mut members: Vec<_> = [Some(name), arguments, meta, other]
                    .into_iter()
                    .flatten()
                    .collect();
                if reversed {
                    members.reverse();
                }
                format!("{{{}}}", members.join(","))
            });
        prop_oneof![
            1 => Just("7".to_owned()),
            1 => Just("null".to_owned()),
            1 => Just("[\"t\",{}]".to_owned()),
            8 => call,
            2 => prop::collection::vec(
                prop_oneof![
                    member("name", vec!["\"getDiagnostics\"", "3"]),
                    arguments(),
                    meta().prop_map(|m| format!("\"_meta\":{m}")),
                ],
                0..5
            )
            .prop_map(|m| format!("{{{}}}", m.join(","))),
        ]
    }

    /// A `tools/call` and its variations: members in any order, repeated or
    /// missing, of other types, with other members beside them.
    fn message() -> impl Strategy<Value = String> {
        let jsonrpc = || {
            member(
                "jsonrpc",
                mostly("\"2.0\"", &["\"1.0\"", "2", "\"2\\u002e0\""]),
            )
        };
        let id = || {
            member(
                "id",
                vec![
                    "1",
                    "-3",
                    "1.5",
                    "0",
                    "\"a\"",
                    "7",
                    "\"b-1\"",
                    "12345",
                    "\"a\\\"\"",
                    "null",
                    "{}",
                    "01",
                ],
            )
        };
        let method = || {
            member(
                "method",
                mostly("\"tools/call\"", &["\"tools\\/call\"", "\"ping\"", "3"]),
            )
        };
        let params = || params().prop_map(|p| format!("\"params\":{p}"));
        let other = || {
            prop_oneof![
                1 => value().prop_map(|v| format!("\"result\":{v}")),
                6 => value().prop_map(|v| format!("\"x\":{v}")),
                1 => jsonrpc(),
                1 => id(),
                1 => method(),
            ]
        };
        // Mostly in the order clients write, with a member of anything
        // beside them; sometimes any members in any order.
        let members = prop_oneof![
            3 => (jsonrpc(), id(), method(), params(), prop::collection::vec(other(), 0..2), any::<prop::sample::Index>())
                .prop_map(|(j, i, m, p, extra, at)| {
                    let mut members = vec![j, i, m, p];
                    for e in extra {
                        members.insert(at.index(members.len() + 1), e);
                    }
                    members
                }),
            1 => prop::collection::vec(prop_oneof![jsonrpc(), id(), method(), params(), other()], 0..7),
        ];
        (
            members,
            prop::sample::select(vec!["", " ", "\n\t", "\r\n "]),
            prop::bool::weighted(0.1),
        )
            .prop_map(|(members, ws, trailing)| {
                let body = members.join(&format!(",{ws}"));
                format!("{ws}{{{ws}{body}{ws}}}{}", if trailing { " x" } else { ws })
            })
    }

    /// The one pass reads exactly what the general parser and the
    /// session's params reading make of a message, and never accepts one
    /// they refuse.
    #[test]
    fn one_pass_reads_what_the_general_parser_reads() {
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(4000));
        let read = std::cell::Cell::new(0);
        runner
            .run(&message(), |text| {
                prop_assert_eq!(one_pass(&text), general(&text), "{}", text);
                // Again: a `_meta` kept from the first reading is read the same.
                prop_assert_eq!(one_pass(&text), general(&text), "{}", text);
                read.set(read.get() + usize::from(super::tools_call(&text).is_some()));
                Ok(())
            })
            .unwrap();
        // The cases exercise the one pass, not only its giving up.
        let read = read.get();
        // About 5 % are read in one pass (the rest are checked to be read
        // by the general parser alone).
        assert!(read > 100, "{read} of 4000 read in one pass");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The canonical shape with any arguments: read in one pass
        /// whenever the general parser accepts it.
        #[test]
        fn a_call_with_any_arguments(arguments in value()) {
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"t","arguments":{arguments},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}}}"#
            );
            prop_assert_eq!(one_pass(&text), general(&text), "{}", text);
            let valid = serde_json::from_str::<serde::de::IgnoredAny>(&arguments).is_ok();
            prop_assert_eq!(super::tools_call(&text).is_some(), valid, "{}", text);
        }
    }
}
