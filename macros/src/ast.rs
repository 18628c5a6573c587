//! A typed model of the annotated function: what each parameter is, what it
//! returns, what its doc comment says.
//!
//! Reading the function also strips the helper attributes (`#[arg]`,
//! `#[args]`) from it, so the function can be emitted unchanged otherwise,
//! whether or not the tool is valid. Rules that concern one part alone are
//! checked here; rules across parts are in `check.rs`.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens as _;
use syn::{FnArg, Ident, ItemFn, LitStr, Pat, ReturnType, Type};

use crate::attr::{ArgAttr, Kind, ToolAttr};
use crate::error::Errors;

/// The annotated function, as the expansion needs it.
pub(crate) struct Tool {
    pub(crate) attr: ToolAttr,
    /// The function's name.
    pub(crate) ident: Ident,
    pub(crate) is_async: bool,
    pub(crate) params: Vec<Param>,
    /// The declared return type; `()` when there is none.
    pub(crate) ret: Type,
    /// The doc comment, trimmed line by line; `None` when there is none.
    pub(crate) doc: Option<String>,
}

/// One parameter of the tool function.
pub(crate) struct Param {
    /// The binding's name.
    pub(crate) ident: Ident,
    /// The declared type.
    pub(crate) ty: Type,
    pub(crate) kind: ParamKind,
}

/// What a parameter is taken from.
pub(crate) enum ParamKind {
    /// `&T`: taken from the call (a state of the server, by type).
    Extract,
    /// One JSON argument, or, when its type implements `FromCall` and it
    /// has no `#[arg]`, taken from the call (see `Arg::probe`).
    Arg(Arg),
    /// `#[args]`: the whole arguments object.
    Args {
        /// The `#[args]` attribute, for errors.
        attr: TokenStream,
    },
}

/// One JSON argument.
pub(crate) struct Arg {
    /// The name on the wire: `#[arg(rename)]`, else the binding in lowerCamelCase.
    pub(crate) wire_name: String,
    /// Where the wire name comes from, for duplicate-name errors.
    pub(crate) wire_span: Span,
    pub(crate) description: Option<LitStr>,
    pub(crate) default: bool,
    /// No `#[arg]`: whether the parameter is an argument or an extractor is
    /// left to the type (`FromCall` or not), resolved by the generated code.
    pub(crate) probe: bool,
}

impl Tool {
    /// Reads `item`, stripping its helper attributes, and pushes every problem into `errors`.
    pub(crate) fn from_fn(attr: ToolAttr, item: &mut ItemFn, errors: &mut Errors) -> Self {
        let sig = &mut item.sig;
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            errors.spanned(&sig.generics, "`#[mcp_tool]` functions cannot be generic");
        }
        if let Some(abi) = &sig.abi {
            errors.spanned(abi, "`#[mcp_tool]` functions cannot have an `extern` ABI");
        }
        if let syn::Safety::Unsafe(unsafety) = &sig.safety {
            errors.spanned(unsafety, "`#[mcp_tool]` functions cannot be `unsafe`");
        }
        if let Some(variadic) = &sig.variadic {
            errors.spanned(variadic, "`#[mcp_tool]` functions cannot be variadic");
        }
        let mut params: Vec<Param> = sig
            .inputs
            .iter_mut()
            .filter_map(|input| param(input, errors))
            .collect();
        if attr.kind != Kind::Tool {
            // A resource's and a prompt's owned parameters are their string
            // arguments, never left to the type: states are `&T`.
            for param in &mut params {
                if let ParamKind::Arg(arg) = &mut param.kind {
                    arg.probe = false;
                }
            }
        }
        let ret = match &sig.output {
            ReturnType::Default => syn::parse_quote!(()),
            ReturnType::Type(_, ty) => {
                if let Type::ImplTrait(_) = **ty {
                    errors.spanned(
                        ty,
                        "`#[mcp_tool]` functions cannot return `impl Trait`; name the return type",
                    );
                }
                (**ty).clone()
            }
        };
        Self {
            attr,
            ident: sig.ident.clone(),
            is_async: sig.asyncness.is_some(),
            params,
            ret,
            doc: doc_comment(&item.attrs, errors),
        }
    }

    /// The tool's wire name: `name = ".."`, else the function's name in
    /// lowerCamelCase (a resource's and a prompt's: the function's name).
    pub(crate) fn name(&self) -> (String, Span) {
        match &self.attr.name {
            Some(name) => (name.value(), name.span()),
            None if self.attr.kind != Kind::Tool => (self.ident.to_string(), self.ident.span()),
            None => (lower_camel_case(&self.ident), self.ident.span()),
        }
    }

    /// What the shared argument decoding names in its errors: the tool's
    /// name, or the kind and the quoted URI or name (``prompt `fix` ``).
    pub(crate) fn subject(&self) -> String {
        let (name, _) = self.name();
        match self.attr.kind {
            Kind::Tool => name,
            Kind::Resource => {
                let uri = self
                    .attr
                    .uri
                    .as_ref()
                    .map(LitStr::value)
                    .unwrap_or_default();
                format!("resource `{uri}`")
            }
            Kind::Prompt => format!("prompt `{name}`"),
        }
    }

    /// The description: `description = ".."`, else the doc comment.
    pub(crate) fn description(&self) -> Option<String> {
        self.attr
            .description
            .as_ref()
            .map(LitStr::value)
            .or_else(|| self.doc.clone())
    }

    /// The `#[args]` parameter, if any.
    pub(crate) fn args_param(&self) -> Option<&Param> {
        self.params
            .iter()
            .find(|p| matches!(p.kind, ParamKind::Args { .. }))
    }

    /// The JSON arguments, in order.
    pub(crate) fn args(&self) -> impl Iterator<Item = (&Param, &Arg)> {
        self.params.iter().filter_map(|p| match &p.kind {
            ParamKind::Arg(arg) => Some((p, arg)),
            _ => None,
        })
    }
}

fn param(input: &mut FnArg, errors: &mut Errors) -> Option<Param> {
    let input = match input {
        FnArg::Receiver(receiver) => {
            errors.spanned(
                &*receiver,
                "`#[mcp_tool]` functions cannot take `self`; a tool is a free function",
            );
            return None;
        }
        FnArg::Typed(input) => input,
    };
    // Strip the helpers first: the function is emitted without them in any case.
    let mut arg_attr = None::<(ArgAttr, TokenStream)>;
    let mut args_marker = None::<TokenStream>;
    let mut kept = Vec::with_capacity(input.attrs.len());
    for attr in input.attrs.drain(..) {
        if attr.path().is_ident("arg") {
            let (parsed, _) =
                arg_attr.get_or_insert_with(|| (ArgAttr::default(), attr.to_token_stream()));
            parsed.parse_into(&attr, errors);
        } else if attr.path().is_ident("args") {
            if let Err(err) = attr.meta.require_path_only() {
                errors.push(syn::Error::new(err.span(), "`#[args]` takes no arguments"));
            }
            if args_marker.is_some() {
                errors.spanned(&attr, "duplicate `#[args]` attribute");
            }
            args_marker = Some(attr.to_token_stream());
        } else {
            kept.push(attr);
        }
    }
    input.attrs = kept;

    let ident = match &*input.pat {
        Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => pat.ident.clone(),
        pat => {
            errors.spanned(
                pat,
                "`#[mcp_tool]` parameters must be plain identifiers; destructure inside the function",
            );
            return None;
        }
    };
    let ty = (*input.ty).clone();
    let kind = if let Type::Reference(reference) = &ty {
        context_param(
            &ty,
            reference,
            arg_attr.map(|(_, attr)| attr),
            args_marker,
            errors,
        )
    } else {
        if let Type::ImplTrait(_) = &ty {
            errors.spanned(
                &ty,
                "`#[mcp_tool]` parameters cannot be `impl Trait`; name the type",
            );
        }
        argument_param(&ident, arg_attr, args_marker, errors)
    };
    Some(Param { ident, ty, kind })
}

/// A `&T` parameter: context, which takes no helper attribute.
fn context_param(
    ty: &Type,
    reference: &syn::TypeReference,
    arg_attr: Option<TokenStream>,
    args_marker: Option<TokenStream>,
    errors: &mut Errors,
) -> ParamKind {
    if reference.mutability.is_some() {
        errors.spanned(
            ty,
            "`#[mcp_tool]` context parameters are shared references: write `&T`, not `&mut T`",
        );
    }
    if let Type::ImplTrait(_) = &*reference.elem {
        errors.spanned(
            ty,
            "`#[mcp_tool]` parameters cannot be `impl Trait`; name the type",
        );
    }
    if let Some(attr) = arg_attr {
        errors.spanned(
            attr,
            "`#[arg]` cannot be used on a context parameter (`&T`)",
        );
    }
    if let Some(attr) = args_marker {
        errors.spanned(
            attr,
            "`#[args]` cannot be used on a context parameter (`&T`)",
        );
    }
    ParamKind::Extract
}

/// Any other parameter: one argument, or with `#[args]` all of them.
fn argument_param(
    ident: &Ident,
    arg_attr: Option<(ArgAttr, TokenStream)>,
    args_marker: Option<TokenStream>,
    errors: &mut Errors,
) -> ParamKind {
    match (args_marker, arg_attr) {
        (Some(attr), Some((_, arg))) => {
            errors.spanned(arg, "`#[arg]` cannot be combined with `#[args]`");
            ParamKind::Args { attr }
        }
        (Some(attr), None) => ParamKind::Args { attr },
        (None, arg_attr) => {
            let probe = arg_attr.is_none();
            let arg_attr = arg_attr.map(|(a, _)| a).unwrap_or_default();
            let (wire_name, wire_span) = match &arg_attr.rename {
                Some(rename) => (rename.value(), rename.span()),
                None => (lower_camel_case(ident), ident.span()),
            };
            ParamKind::Arg(Arg {
                wire_name,
                wire_span,
                description: arg_attr.description,
                default: arg_attr.default.is_some(),
                probe,
            })
        }
    }
}

/// The doc comment: each line trimmed, joined by newlines, outer blank lines dropped.
fn doc_comment(attrs: &[syn::Attribute], errors: &mut Errors) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        match &attr.meta {
            syn::Meta::NameValue(syn::MetaNameValue {
                value: syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(text),
                    ..
                }),
                ..
            }) => lines.extend(text.value().split('\n').map(|l| l.trim().to_owned())),
            _ => errors.spanned(
                attr,
                "`#[mcp_tool]` reads only literal doc comments; write the text with `description = \"...\"`",
            ),
        }
    }
    let first = lines.iter().position(|l| !l.is_empty())?;
    let last = lines.iter().rposition(|l| !l.is_empty())?;
    Some(lines[first..=last].join("\n"))
}

/// `check_document_dirty` → `checkDocumentDirty`, as serde's `rename_all = "camelCase"` does.
pub(crate) fn lower_camel_case(ident: &Ident) -> String {
    let name = ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name);
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for ch in name.chars() {
        if ch == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(ch.to_uppercase());
            upper = false;
        } else {
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;
    use quote::quote;

    use super::*;

    fn tool(attr: TokenStream, item: TokenStream) -> (Tool, ItemFn, Vec<String>) {
        let mut errors = Errors::default();
        let attr = ToolAttr::parse(attr, &mut errors);
        let mut item: ItemFn = syn::parse2(item).unwrap();
        let tool = Tool::from_fn(attr, &mut item, &mut errors);
        (tool, item, errors.messages())
    }

    #[test]
    fn camel_case_names() {
        let ident = |s: &str| syn::parse_str::<Ident>(s).unwrap();
        assert_eq!(
            lower_camel_case(&ident("check_document_dirty")),
            "checkDocumentDirty"
        );
        assert_eq!(lower_camel_case(&ident("get_v2_thing")), "getV2Thing");
        assert_eq!(lower_camel_case(&ident("_unused")), "unused");
        assert_eq!(lower_camel_case(&ident("r#type")), "type");
        assert_eq!(lower_camel_case(&ident("a__b_")), "aB");
        assert_eq!(lower_camel_case(&ident("already")), "already");
    }

    #[test]
    fn parameters_are_classified_and_helpers_stripped() {
        let (tool, item, errors) = tool(
            quote!(read_only),
            quote! {
                /// Reports whether the document at `filePath` has unsaved changes.
                ///
                ///   An unknown path reports `false`.
                pub fn check_document_dirty(
                    cx: &EditorPorts,
                    file_path: String,
                    #[arg(rename = "max", description = "at most", default)] limit: Option<u32>,
                ) -> DirtyResult { todo!() }
            },
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(tool.name().0, "checkDocumentDirty");
        assert_eq!(
            tool.description().unwrap(),
            "Reports whether the document at `filePath` has unsaved changes.\n\nAn unknown path reports `false`."
        );
        assert!(!tool.is_async);
        assert_eq!(tool.ret.to_token_stream().to_string(), "DirtyResult");
        let extracted: Vec<_> = tool
            .params
            .iter()
            .filter(|p| matches!(p.kind, ParamKind::Extract))
            .map(|p| p.ident.to_string())
            .collect();
        assert_eq!(extracted, ["cx"]);
        let args: Vec<_> = tool
            .args()
            .map(|(p, a)| (p.ident.to_string(), a.wire_name.clone(), a.default, a.probe))
            .collect();
        assert_eq!(
            args,
            [
                ("file_path".into(), "filePath".into(), false, true),
                ("limit".into(), "max".into(), true, false)
            ]
        );
        let (_, limit) = tool.args().nth(1).unwrap();
        assert_eq!(limit.description.as_ref().unwrap().value(), "at most");
        assert!(
            !item.to_token_stream().to_string().contains("arg"),
            "helpers are stripped"
        );
    }

    #[test]
    fn args_struct_parameter() {
        let (tool, item, errors) = tool(
            quote!(name = "custom", description = "d"),
            quote!(
                async fn f(#[args] a: MyArgs, s: &State) {}
            ),
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert!(tool.is_async);
        assert_eq!(tool.name().0, "custom");
        assert_eq!(tool.description().unwrap(), "d");
        assert_eq!(tool.args_param().unwrap().ident, "a");
        assert_eq!(tool.ret.to_token_stream().to_string(), "()");
        assert_eq!(
            item.sig.inputs.to_token_stream().to_string(),
            "a : MyArgs , s : & State"
        );
    }

    #[test]
    fn every_local_mistake_is_reported() {
        let (_, _, errors) = tool(
            quote!(),
            quote! {
                fn f<T>(&self, (a, b): (u8, u8), cx: &mut State, x: impl Into<String>,
                        #[arg(rename = "y")] s: &State, #[args(x)] z: Z) -> impl Serialize {}
            },
        );
        assert_eq!(
            errors,
            [
                "`#[mcp_tool]` functions cannot be generic",
                "`#[mcp_tool]` functions cannot take `self`; a tool is a free function",
                "`#[mcp_tool]` parameters must be plain identifiers; destructure inside the function",
                "`#[mcp_tool]` context parameters are shared references: write `&T`, not `&mut T`",
                "`#[mcp_tool]` parameters cannot be `impl Trait`; name the type",
                "`#[arg]` cannot be used on a context parameter (`&T`)",
                "`#[args]` takes no arguments",
                "`#[mcp_tool]` functions cannot return `impl Trait`; name the return type",
            ]
        );
    }

    #[test]
    fn no_doc_comment_is_none() {
        let (tool, _, _) = tool(
            quote!(),
            quote!(
                #[doc = "  "]
                fn f() {}
            ),
        );
        assert_eq!(tool.description(), None);
    }
}
