//! The keys of `#[mcp_tool(...)]` and of the parameter helpers `#[arg(...)]`.
//!
//! Values stay syn types (`LitStr`, `Path`) so that later phases can point at
//! them. Parsing never stops at the first mistake: every unknown or duplicate
//! key is pushed into the error sink and parsing carries on.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser as _};
use syn::{LitStr, Path, Token};

use crate::error::Errors;

/// The keys `#[mcp_tool]` accepts, in the order error messages list them.
pub(crate) const TOOL_KEYS: &[&str] = &[
    "name",
    "description",
    "title",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "blocking",
    "structured",
    "face",
    "crate",
];

/// The keys `#[mcp_resource]` accepts.
pub(crate) const RESOURCE_KEYS: &[&str] = &[
    "uri",
    "name",
    "description",
    "title",
    "mime_type",
    "list",
    "blocking",
    "crate",
];

/// The keys `#[mcp_prompt]` accepts.
pub(crate) const PROMPT_KEYS: &[&str] = &["name", "description", "title", "blocking", "crate"];

/// Which attribute is being read: they share the function model and the shim.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Kind {
    #[default]
    Tool,
    Resource,
    Prompt,
}

impl Kind {
    /// The attribute, as messages name it.
    pub(crate) fn attr(self) -> &'static str {
        match self {
            Self::Tool => "#[mcp_tool]",
            Self::Resource => "#[mcp_resource]",
            Self::Prompt => "#[mcp_prompt]",
        }
    }

    /// What the attribute makes, as messages name it.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Resource => "resource",
            Self::Prompt => "prompt",
        }
    }

    fn keys(self) -> &'static [&'static str] {
        match self {
            Self::Tool => TOOL_KEYS,
            Self::Resource => RESOURCE_KEYS,
            Self::Prompt => PROMPT_KEYS,
        }
    }
}

/// The keys `#[arg]` accepts.
pub(crate) const ARG_KEYS: &[&str] = &["rename", "description", "default"];

/// A flag key (`read_only`), remembered by where it was written.
pub(crate) type Flag = Option<Span>;

/// The parsed `#[mcp_tool(...)]` attribute (or `#[mcp_resource]`, `#[mcp_prompt]`).
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub(crate) kind: Kind,
    /// Where the attribute is, for errors about a missing key.
    pub(crate) span: Option<Span>,
    /// A resource's URI or URI template.
    pub(crate) uri: Option<LitStr>,
    /// A resource's MIME type.
    pub(crate) mime_type: Option<LitStr>,
    /// A resource template's lister.
    pub(crate) list: Option<Path>,
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) read_only: Flag,
    pub(crate) destructive: Flag,
    pub(crate) idempotent: Flag,
    pub(crate) open_world: Flag,
    pub(crate) blocking: Flag,
    pub(crate) structured: Flag,
    /// The face (an agent's protocol) that alone lists the tool.
    pub(crate) face: Option<LitStr>,
    pub(crate) krate: Option<Path>,
}

impl ToolAttr {
    /// Parses the attribute's arguments, pushing every problem into `errors`.
    #[cfg(test)]
    pub(crate) fn parse(tokens: TokenStream, errors: &mut Errors) -> Self {
        Self::parse_kind(Kind::Tool, tokens, errors)
    }

    /// Parses the arguments of the `kind` attribute, pushing every problem into `errors`.
    pub(crate) fn parse_kind(kind: Kind, tokens: TokenStream, errors: &mut Errors) -> Self {
        let mut attr = Self {
            kind,
            span: Some(Span::call_site()),
            ..Self::default()
        };
        let parser = syn::meta::parser(|meta| {
            attr.key(&meta, errors);
            Ok(())
        });
        if let Err(err) = parser.parse2(tokens) {
            errors.push(err);
        }
        attr
    }

    fn key(&mut self, meta: &ParseNestedMeta<'_>, errors: &mut Errors) {
        let path = &meta.path;
        let span = key_span(path);
        let kind = self.kind;
        let result = if !kind.keys().iter().any(|key| path.is_ident(key)) {
            Err(unknown_key(meta, kind.attr(), kind.keys()))
        } else if path.is_ident("uri") {
            string(meta, &mut self.uri, "uri")
        } else if path.is_ident("mime_type") {
            string(meta, &mut self.mime_type, "mime_type")
        } else if path.is_ident("list") {
            set_once(meta, &mut self.list, "list", |m| m.value()?.parse::<Path>())
        } else if path.is_ident("name") {
            string(meta, &mut self.name, "name")
        } else if path.is_ident("description") {
            string(meta, &mut self.description, "description")
        } else if path.is_ident("title") {
            string(meta, &mut self.title, "title")
        } else if path.is_ident("face") {
            string(meta, &mut self.face, "face")
        } else if path.is_ident("crate") {
            set_once(meta, &mut self.krate, "crate", |m| {
                m.value()?.parse::<Path>()
            })
        } else {
            let flag = [
                ("read_only", &mut self.read_only),
                ("destructive", &mut self.destructive),
                ("idempotent", &mut self.idempotent),
                ("open_world", &mut self.open_world),
                ("blocking", &mut self.blocking),
                ("structured", &mut self.structured),
            ]
            .into_iter()
            .find(|(key, _)| path.is_ident(key));
            match flag {
                Some((key, slot)) => set_once(meta, slot, key, |m| flag_value(m, key, span)),
                None => Err(unknown_key(meta, "#[mcp_tool]", TOOL_KEYS)),
            }
        };
        if let Err(err) = result {
            errors.push(err);
            skip_value(meta.input);
        }
    }
}

/// The parsed `#[arg(...)]` helper of one parameter.
#[derive(Default)]
pub(crate) struct ArgAttr {
    pub(crate) rename: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) default: Flag,
}

impl ArgAttr {
    /// Adds the keys of one `#[arg(...)]` attribute, pushing every problem into `errors`.
    pub(crate) fn parse_into(&mut self, attr: &syn::Attribute, errors: &mut Errors) {
        // A bare `#[arg]` only says "a JSON argument, even if the type is an extractor".
        if let syn::Meta::Path(_) = attr.meta {
            return;
        }
        let result = attr.parse_nested_meta(|meta| {
            let span = key_span(&meta.path);
            let result = if meta.path.is_ident("rename") {
                string(&meta, &mut self.rename, "rename")
            } else if meta.path.is_ident("description") {
                string(&meta, &mut self.description, "description")
            } else if meta.path.is_ident("default") {
                set_once(&meta, &mut self.default, "default", |m| {
                    flag_value(m, "default", span)
                })
            } else {
                Err(unknown_key(&meta, "#[arg]", ARG_KEYS))
            };
            if let Err(err) = result {
                errors.push(err);
                skip_value(meta.input);
            }
            Ok(())
        });
        if let Err(err) = result {
            errors.push(err);
        }
    }
}

/// The span of a key: its single identifier (`crate` included), else the whole path.
fn key_span(path: &Path) -> Span {
    path.segments
        .first()
        .filter(|_| path.segments.len() == 1)
        .map_or_else(|| syn::spanned::Spanned::span(path), |s| s.ident.span())
}

fn string(meta: &ParseNestedMeta<'_>, slot: &mut Option<LitStr>, key: &str) -> syn::Result<()> {
    set_once(meta, slot, key, |m| m.value()?.parse::<LitStr>())
}

/// Stores a key's value, refusing a second occurrence at the second key.
fn set_once<T>(
    meta: &ParseNestedMeta<'_>,
    slot: &mut Option<T>,
    key: &str,
    parse: impl FnOnce(&ParseNestedMeta<'_>) -> syn::Result<T>,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format_args!("duplicate `{key}` key")));
    }
    *slot = Some(parse(meta)?);
    Ok(())
}

/// A flag takes no value: `read_only`, not `read_only = true`.
fn flag_value(meta: &ParseNestedMeta<'_>, key: &str, span: Span) -> syn::Result<Span> {
    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
        return Err(meta.error(format_args!("`{key}` takes no value: write `{key}` alone")));
    }
    Ok(span)
}

fn unknown_key(meta: &ParseNestedMeta<'_>, attr: &str, valid: &[&str]) -> syn::Error {
    let key = meta
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::");
    let valid = valid
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    meta.error(format_args!(
        "unknown `{attr}` key `{key}`; expected one of {valid}"
    ))
}

/// After a bad key, skips the rest of its value (up to the next `,`) so the next key still parses.
fn skip_value(input: ParseStream<'_>) {
    let _ = input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            if matches!(&tt, proc_macro2::TokenTree::Punct(p) if p.as_char() == ',') {
                break;
            }
            rest = next;
        }
        Ok(((), rest))
    });
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    fn parse(tokens: TokenStream) -> (ToolAttr, Vec<String>) {
        let mut errors = Errors::default();
        let attr = ToolAttr::parse(tokens, &mut errors);
        (attr, errors.messages())
    }

    #[test]
    fn every_key_parses() {
        let (attr, errors) = parse(quote!(
            name = "x",
            description = "d",
            title = "T",
            read_only,
            destructive,
            idempotent,
            open_world,
            blocking,
            structured,
            crate = ::my::rt
        ));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(attr.name.unwrap().value(), "x");
        assert_eq!(attr.description.unwrap().value(), "d");
        assert_eq!(attr.title.unwrap().value(), "T");
        assert!(
            attr.read_only.is_some() && attr.destructive.is_some() && attr.idempotent.is_some()
        );
        assert!(attr.open_world.is_some() && attr.blocking.is_some() && attr.structured.is_some());
        let krate = attr.krate.unwrap();
        assert_eq!(quote!(#krate).to_string(), ":: my :: rt");
    }

    #[test]
    fn all_mistakes_are_reported_and_parsing_goes_on() {
        let (attr, errors) = parse(quote!(
            nmae = "x",
            read_only,
            read_only,
            foo(bar),
            title = "t",
            blocking = true
        ));
        assert_eq!(
            errors,
            [
                "unknown `#[mcp_tool]` key `nmae`; expected one of `name`, `description`, `title`, `read_only`, `destructive`, `idempotent`, `open_world`, `blocking`, `structured`, `face`, `crate`",
                "duplicate `read_only` key",
                "unknown `#[mcp_tool]` key `foo`; expected one of `name`, `description`, `title`, `read_only`, `destructive`, `idempotent`, `open_world`, `blocking`, `structured`, `face`, `crate`",
                "`blocking` takes no value: write `blocking` alone",
            ]
        );
        assert_eq!(attr.title.unwrap().value(), "t");
        assert!(attr.read_only.is_some());
    }

    #[test]
    fn values_must_have_the_right_kind() {
        let (_, errors) = parse(quote!(name = 3));
        assert_eq!(errors, ["expected string literal"]);
    }

    #[test]
    fn arg_keys() {
        let attr: syn::Attribute =
            syn::parse_quote!(#[arg(rename = "p", description = "d", default, other)]);
        let mut arg = ArgAttr::default();
        let mut errors = Errors::default();
        arg.parse_into(&attr, &mut errors);
        assert_eq!(arg.rename.unwrap().value(), "p");
        assert_eq!(arg.description.unwrap().value(), "d");
        assert!(arg.default.is_some());
        assert_eq!(
            errors.messages(),
            ["unknown `#[arg]` key `other`; expected one of `rename`, `description`, `default`"]
        );
    }
}
