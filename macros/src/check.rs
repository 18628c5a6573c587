//! Rules that span several parts of the tool: names against each other, the
//! attribute against the signature.

use std::collections::HashMap;

use crate::ast::{ParamKind, Tool};
use crate::error::Errors;

/// The longest tool name MCP allows.
const MAX_NAME_LEN: usize = 128;

/// Pushes every cross-part problem of `tool` into `errors`.
pub(crate) fn validate(tool: &Tool, errors: &mut Errors) {
    let (name, span) = tool.name();
    if let Some(problem) = name_problem(&name) {
        let whose = if tool.attr.name.is_some() {
            ""
        } else {
            " (from the function's name; set another with `name = \"...\"`)"
        };
        errors.at(
            span,
            format_args!("invalid tool name `{name}`{whose}: {problem}"),
        );
    }
    if tool.description().is_none_or(|d| d.trim().is_empty()) {
        let span = tool
            .attr
            .description
            .as_ref()
            .map_or(tool.ident.span(), syn::LitStr::span);
        errors.at(
            span,
            "`#[mcp_tool]` functions need a description, which the model reads: add a doc comment or `description = \"...\"`",
        );
    }
    if let (true, Some(blocking)) = (tool.is_async, tool.attr.blocking) {
        errors.at(blocking, "`blocking` cannot be used on an `async fn`");
    }

    let mut args_params = tool.params.iter().filter_map(|p| match &p.kind {
        ParamKind::Args { attr } => Some(attr),
        _ => None,
    });
    if args_params.next().is_some() {
        for attr in args_params {
            errors.spanned(
                attr,
                "a `#[mcp_tool]` function takes at most one `#[args]` parameter",
            );
        }
        // Without `#[arg]`, a parameter beside `#[args]` must be taken from
        // the call; the generated code requires that of its type.
        for (param, _) in tool.args().filter(|(_, arg)| !arg.probe) {
            errors.spanned(
                &param.ident,
                "`#[args]` is the whole arguments object; other arguments belong in its struct",
            );
        }
    }

    let mut seen = HashMap::new();
    for (param, arg) in tool.args() {
        if let Some(first) = seen.insert(arg.wire_name.as_str(), &param.ident) {
            errors.at(
                arg.wire_span,
                format_args!(
                    "`{first}` and `{}` are both the argument `{}`; rename one with `#[arg(rename = \"...\")]`",
                    param.ident, arg.wire_name
                ),
            );
        }
    }
}

/// Why `name` breaks the MCP rule `^[A-Za-z0-9._-]{1,128}$`, if it does.
pub(crate) fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("names cannot be empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Some(format!(
            "names are at most {MAX_NAME_LEN} characters, this one has {}",
            name.len()
        ));
    }
    let bad = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))?;
    Some(format!(
        "`{}` is not allowed; names use only `A-Z`, `a-z`, `0-9`, `_`, `-` and `.`",
        bad.escape_default()
    ))
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;
    use quote::quote;

    use super::*;
    use crate::attr::ToolAttr;

    fn errors(attr: TokenStream, item: TokenStream) -> Vec<String> {
        let mut errors = Errors::default();
        let attr = ToolAttr::parse(attr, &mut errors);
        let mut item: syn::ItemFn = syn::parse2(item).unwrap();
        let tool = Tool::from_fn(attr, &mut item, &mut errors);
        validate(&tool, &mut errors);
        errors.messages()
    }

    #[test]
    fn names() {
        assert_eq!(name_problem("a.b-c_D9"), None);
        assert_eq!(name_problem(&"a".repeat(128)), None);
        assert!(
            name_problem(&"a".repeat(129))
                .unwrap()
                .contains("at most 128")
        );
        assert!(name_problem("").is_some());
        assert_eq!(
            name_problem("get tool").unwrap(),
            "` ` is not allowed; names use only `A-Z`, `a-z`, `0-9`, `_`, `-` and `.`"
        );
        assert!(name_problem("größe").is_some());
    }

    #[test]
    fn valid_tool_has_no_errors() {
        assert!(
            errors(
                quote!(),
                quote!(
                    /// d
                    fn f(cx: &S, a: u8, #[arg(rename = "b")] c: u8) {}
                )
            )
            .is_empty()
        );
    }

    #[test]
    fn cross_part_mistakes() {
        assert_eq!(
            errors(
                quote!(name = "a b", blocking),
                quote!(
                    async fn f() {}
                )
            ),
            [
                "invalid tool name `a b`: ` ` is not allowed; names use only `A-Z`, `a-z`, `0-9`, `_`, `-` and `.`",
                "`#[mcp_tool]` functions need a description, which the model reads: add a doc comment or `description = \"...\"`",
                "`blocking` cannot be used on an `async fn`",
            ]
        );
        assert_eq!(
            errors(
                quote!(description = "d"),
                quote!(
                    fn f(#[args] a: A, #[args] b: B, #[arg] c: u8, progress: Progress) {}
                )
            ),
            [
                "a `#[mcp_tool]` function takes at most one `#[args]` parameter",
                "`#[args]` is the whole arguments object; other arguments belong in its struct",
            ]
        );
        assert_eq!(
            errors(
                quote!(description = "d"),
                quote!(
                    fn f(file_path: u8, #[arg(rename = "filePath")] b: u8) {}
                )
            ),
            [
                "`file_path` and `b` are both the argument `filePath`; rename one with `#[arg(rename = \"...\")]`"
            ]
        );
    }
}
