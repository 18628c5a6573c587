//! Rules that span several parts of the tool: names against each other, the
//! attribute against the signature.

use std::collections::HashMap;

use crate::ast::{ParamKind, Tool};
use crate::attr::Kind;
use crate::error::Errors;

/// The longest tool name MCP allows.
const MAX_NAME_LEN: usize = 128;

/// Pushes every cross-part problem of `tool` into `errors`.
pub(crate) fn validate(tool: &Tool, errors: &mut Errors) {
    if tool.attr.kind == Kind::Resource {
        resource(tool, errors);
    }
    if tool.attr.kind != Kind::Tool {
        args_on_item(tool, errors);
    }
    name_and_description(tool, errors);
    if let (true, Some(blocking)) = (tool.is_async, tool.attr.blocking) {
        errors.at(blocking, "`blocking` cannot be used on an `async fn`");
    }
    args_param(tool, errors);
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

/// `#[args]` on a resource or a prompt, whose arguments come one by one.
fn args_on_item(tool: &Tool, errors: &mut Errors) {
    for param in &tool.params {
        if let ParamKind::Args { attr } = &param.kind {
            errors.spanned(
                attr,
                format_args!(
                    "`#[args]` is for tools; a `{}` function takes its arguments one by one",
                    tool.attr.kind.attr()
                ),
            );
        }
    }
}

/// The item's name (a resource's is free text) and its description.
fn name_and_description(tool: &Tool, errors: &mut Errors) {
    let (name, span) = tool.name();
    if let Some(problem) = name_problem(&name).filter(|_| tool.attr.kind != Kind::Resource) {
        let whose = if tool.attr.name.is_some() {
            ""
        } else {
            " (from the function's name; set another with `name = \"...\"`)"
        };
        errors.at(
            span,
            format_args!(
                "invalid {} name `{name}`{whose}: {problem}",
                tool.attr.kind.noun()
            ),
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
}

/// At most one `#[args]`, and beside it only what the call gives.
fn args_param(tool: &Tool, errors: &mut Errors) {
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
}

/// A resource's URI against its parameters: a template's variables are
/// exactly its arguments; a fixed URI takes none.
fn resource(tool: &Tool, errors: &mut Errors) {
    let attr = &tool.attr;
    let Some(uri) = &attr.uri else {
        errors.at(
            attr.span.unwrap_or_else(proc_macro2::Span::call_site),
            "`#[mcp_resource]` needs the resource's URI: `uri = \"ide://diagnostics\"`, or a template such as `uri = \"file:///{path}\"`",
        );
        return;
    };
    let variables = match template_variables(&uri.value()) {
        Ok(variables) => variables,
        Err(problem) => {
            errors.at(uri.span(), format_args!("invalid URI template: {problem}"));
            return;
        }
    };
    if let (Some(list), true) = (&attr.list, variables.is_empty()) {
        errors.spanned(
            list,
            "`list` names the resources a template stands for; this URI is fixed, and listed as it is",
        );
    }
    // An `#[args]` parameter is reported as such; its variables are not
    // reported missing besides.
    let has_args = tool
        .params
        .iter()
        .any(|param| matches!(param.kind, ParamKind::Args { .. }));
    for variable in variables.iter().filter(|_| !has_args) {
        if !tool.args().any(|(_, arg)| arg.wire_name == *variable) {
            errors.at(
                uri.span(),
                format_args!(
                    "the template's variable `{{{variable}}}` is no parameter of the function: add `{variable}: String`"
                ),
            );
        }
    }
    for (param, arg) in tool.args() {
        if !variables.contains(&arg.wire_name) {
            let why = if variables.is_empty() {
                "a resource with a fixed URI takes no arguments"
            } else {
                "every argument of a resource is a variable of its URI template"
            };
            errors.spanned(
                &param.ident,
                format_args!("`{}` is not in `{}`: {why}", arg.wire_name, uri.value()),
            );
        }
    }
}

/// The variables of an RFC 6570 level-1 template, in order (none for a
/// fixed URI), or why it is not one; the runtime reads it by the same rules.
fn template_variables(template: &str) -> Result<Vec<String>, String> {
    let mut variables = Vec::new();
    let mut rest = template;
    let mut after_variable = false;
    while let Some(open) = rest.find(['{', '}']) {
        if rest.as_bytes()[open] == b'}' {
            return Err("`}` without `{`".into());
        }
        if open > 0 {
            after_variable = false;
        }
        let after = &rest[open + 1..];
        let close = after.find('}').ok_or("`{` without `}`")?;
        let name = &after[..close];
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!(
                "`{{{name}}}` is not a level-1 variable: write `{{name}}` with letters, digits and `_` only"
            ));
        }
        if after_variable {
            return Err(
                "two variables side by side cannot be told apart: put literal text between them"
                    .into(),
            );
        }
        variables.push(name.to_owned());
        after_variable = true;
        rest = &after[close + 1..];
    }
    Ok(variables)
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
