//! The `#[mcp_tool]`, `#[mcp_resource]` and `#[mcp_prompt]` attributes of
//! ide-mcp; use them through `ide_mcp_runtime`.
//!
//! Phases: `attr` (the attribute's keys) → `ast` (a typed model of the
//! function) → `check` (rules across parts) → `expand` (code generation), or
//! `fallback` (the function and the errors) when anything is wrong.

mod ast;
mod attr;
mod check;
mod error;
mod expand;
mod fallback;

use proc_macro::TokenStream;

#[doc = include_str!("mcp_tool.md")]
#[proc_macro_attribute]
pub fn mcp_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    item_impl(attr::Kind::Tool, attr.into(), item.into()).into()
}

#[doc = include_str!("mcp_resource.md")]
#[proc_macro_attribute]
pub fn mcp_resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    item_impl(attr::Kind::Resource, attr.into(), item.into()).into()
}

#[doc = include_str!("mcp_prompt.md")]
#[proc_macro_attribute]
pub fn mcp_prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    item_impl(attr::Kind::Prompt, attr.into(), item.into()).into()
}

fn item_impl(
    kind: attr::Kind,
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let mut errors = error::Errors::naming(kind.attr());
    let attr = attr::ToolAttr::parse_kind(kind, attr, &mut errors);
    let Ok(syn::Item::Fn(mut item)) = syn::parse2::<syn::Item>(item.clone()) else {
        let mut not_fn = syn::Error::new(
            proc_macro2::Span::call_site(),
            format_args!(
                "`{}` can only be applied to a free `fn` or `async fn`",
                kind.attr()
            ),
        );
        if let Err(more) = errors.finish() {
            not_fn.combine(more);
        }
        return fallback::expand(item, &not_fn);
    };
    let tool = ast::Tool::from_fn(attr, &mut item, &mut errors);
    check::validate(&tool, &mut errors);
    match errors.finish() {
        Ok(()) => expand::expand(&tool, &item),
        Err(errors) => fallback::expand(&item, &errors),
    }
}
