//! Serving resources and prompts: `resources/list`,
//! `resources/templates/list`, `resources/read`, `prompts/list` and
//! `prompts/get`. A read and a get run their shims as a call runs a tool's
//! ([`dispatch`]), so that extractors, async functions, cancellation and
//! panics behave the same; their failures are JSON-RPC errors.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::dispatch::{self, Handler, InFlight};
use crate::era::{self, ListCache};
use crate::extract::Call;
use crate::jsonrpc::{self, INVALID_PARAMS, RequestId};
use crate::registry::{Registry, ResourceMatch};
use crate::resource::RESOURCE_NOT_FOUND;
use crate::tool::Arguments;

/// What one request of these methods needs besides its params.
pub(crate) struct Ask<'a, 'c> {
    pub(crate) registry: &'a Registry,
    pub(crate) call: Call<'c>,
    pub(crate) id: RequestId<'a>,
    pub(crate) stateless: bool,
}

/// Appends the `resources/list` response: the fixed resources, then what
/// each listing template stands for now.
pub(crate) fn list_resources(ask: &Ask<'_, '_>, out: &mut Vec<u8>) {
    let registry = ask.registry;
    let mut list = br#"{"resources":["#.to_vec();
    list.extend_from_slice(registry.fixed_resource_entries());
    let mut first = registry.fixed_resource_entries().is_empty();
    let mut live = false;
    for template in registry.resource_templates() {
        let Some(lister) = template.def.list else {
            continue;
        };
        live = true;
        for mut entry in lister(&ask.call) {
            if entry.mime_type.is_none() {
                entry.mime_type = template.def.mime_type.map(str::to_owned);
            }
            if !first {
                list.push(b',');
            }
            first = false;
            serde_json::to_writer(&mut list, &entry).expect("strings serialize");
        }
    }
    list.extend_from_slice(b"]}");
    let cache = if live {
        ListCache::Live
    } else {
        ListCache::Registry
    };
    write_list(ask, &list, cache, out);
}

/// Appends the `resources/templates/list` response.
pub(crate) fn list_templates(ask: &Ask<'_, '_>, out: &mut Vec<u8>) {
    write_list(
        ask,
        ask.registry.templates_list_bytes(),
        ListCache::Registry,
        out,
    );
}

/// Appends the `prompts/list` response.
pub(crate) fn list_prompts(ask: &Ask<'_, '_>, out: &mut Vec<u8>) {
    write_list(
        ask,
        ask.registry.prompts_list_bytes(),
        ListCache::Registry,
        out,
    );
}

fn write_list(ask: &Ask<'_, '_>, list: &[u8], cache: ListCache, out: &mut Vec<u8>) {
    if ask.stateless {
        era::write_list(out, ask.id, list, cache);
    } else {
        jsonrpc::write_result(out, ask.id, list);
    }
}

/// The params of `resources/read`.
#[derive(Deserialize)]
struct ReadParams<'a> {
    #[serde(borrow)]
    uri: Cow<'a, str>,
}

/// The params of `prompts/get`.
#[derive(Deserialize)]
struct GetParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
}

/// Reads the resource `params.uri` names; `true` when answered now.
pub(crate) fn read_resource(
    ask: &Ask<'_, '_>,
    params: Option<&RawValue>,
    inflight: &mut InFlight,
    out: &mut Vec<u8>,
) -> bool {
    let Some(ReadParams { uri }) = decode(params, "resources/read", ask.id, out) else {
        return true;
    };
    let (def, args) = match ask.registry.find_resource(&uri) {
        Some(ResourceMatch::Fixed(def)) => (def, None),
        Some(ResourceMatch::Template(template, bound)) => {
            let object: serde_json::Map<String, serde_json::Value> = bound
                .into_iter()
                .map(|(name, value)| (name.to_owned(), value.into()))
                .collect();
            (
                template.def,
                Some(serde_json::to_string(&object).expect("strings serialize")),
            )
        }
        Some(ResourceMatch::BadValue(_, error)) => {
            jsonrpc::write_error(
                out,
                Some(ask.id),
                INVALID_PARAMS,
                &format_args!("invalid resource URI `{}`: {error}", jsonrpc::clip(&uri)),
            );
            return true;
        }
        None => {
            jsonrpc::write_error_with_data(
                out,
                Some(ask.id),
                RESOURCE_NOT_FOUND,
                &format_args!("resource not found: `{}`", jsonrpc::clip(&uri)),
                &serde_json::json!({ "uri": uri }).to_string(),
            );
            return true;
        }
    };
    let handler = Handler::resource(def);
    let call = ask.call.with_resource_uri(Some(&uri));
    let args = args.as_deref().map(Arguments::checked);
    dispatch::call(call, inflight, ask.id, handler, args, ask.stateless, out)
}

/// Renders the prompt `params.name` with `params.arguments`; `true` when answered now.
pub(crate) fn get_prompt(
    ask: &Ask<'_, '_>,
    params: Option<&RawValue>,
    inflight: &mut InFlight,
    out: &mut Vec<u8>,
) -> bool {
    let Some(GetParams { name, arguments }) = decode(params, "prompts/get", ask.id, out) else {
        return true;
    };
    let Some(prompt) = ask.registry.prompt(&name) else {
        jsonrpc::write_error(
            out,
            Some(ask.id),
            INVALID_PARAMS,
            &format_args!("unknown prompt `{}`", jsonrpc::clip(&name)),
        );
        return true;
    };
    let handler = Handler::prompt(prompt.def);
    let args = arguments
        .filter(|raw| raw.get() != "null")
        .map(Arguments::from);
    dispatch::call(
        ask.call,
        inflight,
        ask.id,
        handler,
        args,
        ask.stateless,
        out,
    )
}

/// The params of `method`, or `None` after answering -32602.
fn decode<'p, T: Deserialize<'p>>(
    params: Option<&'p RawValue>,
    method: &str,
    id: RequestId<'_>,
    out: &mut Vec<u8>,
) -> Option<T> {
    let decoded = params
        .ok_or_else(|| "params are missing".to_owned())
        .and_then(|params| {
            serde_json::from_str::<T>(params.get())
                .map_err(|err| crate::decode::without_position(&err))
        });
    decoded
        .map_err(|why| {
            jsonrpc::write_error(
                out,
                Some(id),
                INVALID_PARAMS,
                &format_args!("invalid `{method}` params: {why}"),
            );
        })
        .ok()
}
