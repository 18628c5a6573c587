//! A `tools/call`'s params as the session reads them: the tool's name, its
//! arguments (their JSON text, checked), and what `_meta` carries for the
//! runtime (the progress token, the protocol version).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::jsonrpc;
use crate::tool::Arguments;

/// The params of a `tools/call`. Unknown members (`claudecode/toolUseId`,
/// …) are ignored.
#[derive(Deserialize)]
pub(crate) struct CallParams<'a> {
    /// The params' JSON text, as the client wrote it (for a relay).
    #[serde(skip)]
    pub(crate) json: &'a str,
    #[serde(borrow)]
    pub(crate) name: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "arguments")]
    pub(crate) arguments: Option<Arguments<'a>>,
    #[serde(borrow, default, rename = "_meta")]
    pub(crate) meta: Option<CallMeta<'a>>,
}

/// `arguments` as serde reads them: `null` is none.
fn arguments<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Arguments<'de>>, D::Error> {
    let raw = Option::<&'de RawValue>::deserialize(deserializer)?;
    Ok(raw.map(Arguments::from))
}

/// A `tools/call`'s `_meta`: what the runtime reads of it.
#[derive(Deserialize)]
pub(crate) struct CallMeta<'a> {
    #[serde(borrow, default, rename = "progressToken")]
    pub(crate) progress_token: Option<&'a RawValue>,
    /// As raw JSON: `null` stays visible (not a string), not read as no version.
    #[serde(
        borrow,
        default,
        rename = "io.modelcontextprotocol/protocolVersion",
        deserialize_with = "jsonrpc::present_text"
    )]
    pub(crate) version: Option<&'a str>,
}

impl<'a> CallParams<'a> {
    /// The params of a call of tool `name`; `version` is the raw JSON of
    /// `_meta`'s protocol version.
    pub(crate) fn new(
        json: &'a str,
        name: Cow<'a, str>,
        arguments: Option<Arguments<'a>>,
        progress_token: Option<&'a RawValue>,
        version: Option<&'a str>,
    ) -> Self {
        let meta = (progress_token.is_some() || version.is_some()).then_some(CallMeta {
            progress_token,
            version,
        });
        Self {
            json,
            name,
            arguments,
            meta,
        }
    }

    /// The call's progress token and `_meta` protocol version, as raw JSON.
    pub(crate) fn meta_json(&self) -> (Option<&str>, Option<&str>) {
        let meta = self.meta.as_ref();
        (
            meta.and_then(|m| m.progress_token).map(RawValue::get),
            meta.and_then(|m| m.version),
        )
    }

    /// Reads a `tools/call`'s params, or says why they are invalid.
    pub(crate) fn read(params: Option<&'a RawValue>) -> Result<Self, String> {
        let Some(params) = params else {
            return Err("`tools/call` needs params with the tool's `name`".to_owned());
        };
        // serde would also read a struct from an array (`["name", {…}]`);
        // MCP's `tools/call` params are an object, so say so instead.
        if !params.get().starts_with('{') {
            return Err("`tools/call` params must be an object with the tool's `name`".to_owned());
        }
        let mut call: Self = serde_json::from_str(params.get()).map_err(|err| {
            format!(
                "invalid `tools/call` params: {}",
                crate::decode::without_position(&err)
            )
        })?;
        call.json = params.get();
        Ok(call)
    }
}
