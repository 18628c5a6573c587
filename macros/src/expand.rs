//! Code generation for a valid tool. Never reports user errors: those were
//! found by `ast.rs` and `check.rs`; type errors are left to rustc, with
//! bounds spanned on the user's tokens so that they land there.
//!
//! The expansion, beside the function itself:
//!
//! ```text
//! const _: () = {
//!     struct __Args { .. }             // serde + schemars, unless `#[args]`
//!     const _: fn() = assert_argument::<T>;   // one per argument type, at its span
//!     fn __call(cx, args, out) -> Option<ToolFuture> { .. }
//!     #[distributed_slice(IDE_MCP_RUNTIME_TOOLS_V0)]
//!     static __TOOL: ToolDef = ToolDef { .. };
//! };
//! ```

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned as _;
use syn::{Ident, ItemFn, LitStr};

use crate::ast::{ParamKind, Tool};

/// Generated names: mixed-site, so they never clash with the user's.
fn ident(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// The user's function, then the hidden registration.
pub(crate) fn expand(tool: &Tool, item: &ItemFn) -> TokenStream {
    let krate = tool
        .attr
        .krate
        .as_ref()
        .map_or_else(|| quote!(::ide_mcp_runtime), ToTokens::to_token_stream);
    let p = quote!(#krate::__private);

    let (args_ty, args_struct) = args_type(tool, &p);
    let assertions = argument_assertions(tool, &p);
    let shim = shim(tool, &p, &args_ty);
    let output_schema = output_schema(tool, &p);
    let tool_def = tool_def(tool, item, &p, &args_ty, output_schema.is_some());

    quote! {
        #item

        #[doc(hidden)]
        #[allow(
            non_camel_case_types,
            non_snake_case,
            non_upper_case_globals,
            dead_code,
            unused_qualifications,
            unused_imports,
            unreachable_pub,
            missing_docs,
            clippy::all,
            clippy::pedantic,
            clippy::nursery
        )]
        const _: () = {
            #args_struct
            #assertions
            #shim
            #output_schema
            #tool_def
        };
    }
}

/// The arguments type: the `#[args]` parameter's type, or a generated struct.
fn args_type(tool: &Tool, p: &TokenStream) -> (TokenStream, TokenStream) {
    if let Some(param) = tool.args_param() {
        return (param.ty.to_token_stream(), TokenStream::new());
    }
    let name = ident("__Args");
    let serde_crate = LitStr::new(&quote!(#p::serde).to_string(), Span::call_site());
    let schemars_crate = LitStr::new(&quote!(#p::schemars).to_string(), Span::call_site());
    let fields = tool.args().map(|(param, arg)| {
        let field = &param.ident;
        let ty = &param.ty;
        let wire = LitStr::new(&arg.wire_name, arg.wire_span);
        let default = arg.default.then(|| quote!(#[serde(default)]));
        let description = arg
            .description
            .as_ref()
            .map(|d| quote!(#[schemars(description = #d)]));
        quote! {
            #[serde(rename = #wire)]
            #default
            #description
            #field: #ty,
        }
    });
    let def = quote! {
        #[derive(#p::serde::Deserialize, #p::schemars::JsonSchema)]
        #[serde(crate = #serde_crate)]
        #[schemars(crate = #schemars_crate)]
        struct #name {
            #(#fields)*
        }
    };
    (name.to_token_stream(), def)
}

/// One check per argument type, spanned on it, so "not `Deserialize`" or
/// "not `JsonSchema`" points at the parameter rather than at the attribute.
fn argument_assertions(tool: &Tool, p: &TokenStream) -> TokenStream {
    tool.params
        .iter()
        .filter(|param| !matches!(param.kind, ParamKind::Context))
        .map(|param| {
            let ty = &param.ty;
            quote_spanned!(ty.span()=> const _: fn() = #p::assert_argument::<#ty>;)
        })
        .collect()
}

/// Converts the value `ret` of the return type into the result, in `out`.
fn write_result(tool: &Tool, p: &TokenStream, ret: &Ident, out: &TokenStream) -> TokenStream {
    let ty = &tool.ret;
    let method = if tool.attr.structured.is_some() {
        quote!(write_structured)
    } else {
        quote!(write)
    };
    // Only the call is spanned on the return type: that is where a wrong type is reported.
    let call = quote_spanned! {ty.span()=>
        (&#p::Probe::<#ty>::NEW).__kind().#method(#ret, #out);
    };
    quote! {
        {
            use #p::{ResultTag as _, ValueTag as _};
            #call
        }
    }
}

/// `fn __call(cx, args, out) -> Option<ToolFuture>`: the `CallFn` of the tool.
fn shim(tool: &Tool, p: &TokenStream, args_ty: &TokenStream) -> TokenStream {
    let (name, _) = tool.name();
    let cx = ident("__cx");
    let args = ident("__args");
    let out = ident("__out");
    let decoded = ident("__decoded");
    let ret = ident("__ret");
    let func = &tool.ident;

    let mut contexts = Vec::new();
    let call_args: Vec<TokenStream> = tool
        .params
        .iter()
        .enumerate()
        .map(|(i, param)| match &param.kind {
            ParamKind::Context => {
                let local = format_ident!("__context{}", i, span = Span::mixed_site());
                contexts.push((local.clone(), &param.ty));
                local.into_token_stream()
            }
            ParamKind::Arg(_) => {
                let field = &param.ident;
                quote!(#decoded.#field)
            }
            ParamKind::Args { .. } => decoded.to_token_stream(),
        })
        .collect();
    let extract = |ty: &syn::Type, out: &TokenStream| quote_spanned!(ty.span()=> #p::context::<#ty>(#cx, #out));
    let decode = quote! {
        let #decoded = #p::decode_args::<#args_ty>(#name, #args, #out)?;
    };

    let body = if tool.is_async {
        let owned = ident("__cx_owned");
        let checks = contexts.iter().map(|(_, ty)| {
            let get = extract(ty, &out.to_token_stream());
            quote!(let _ = #get?;)
        });
        let out_ref = quote!(&mut #out);
        let takes = contexts.iter().map(|(local, ty)| {
            let get = extract(ty, &out_ref);
            quote! {
                let #p::Some(#local) = #get else {
                    return #out;
                };
            }
        });
        let write = write_result(tool, p, &ret, &out_ref);
        quote! {
            #decode
            // Fail before spawning when a state is missing; taken again inside the future.
            #(#checks)*
            let #owned = #p::ToolContext::clone(#cx);
            #p::Some(#p::boxed_future(async move {
                let mut #out = #p::Vec::new();
                let #cx = &#owned;
                #(#takes)*
                let #ret = #func(#(#call_args),*).await;
                #write
                #out
            }))
        }
    } else {
        let takes = contexts.iter().map(|(local, ty)| {
            let get = extract(ty, &out.to_token_stream());
            quote!(let #local = #get?;)
        });
        let write = write_result(tool, p, &ret, &out.to_token_stream());
        quote! {
            #decode
            #(#takes)*
            let #ret = #func(#(#call_args),*);
            #write
            #p::None
        }
    };
    let shim = ident("__call");
    quote! {
        fn #shim(
            #cx: &#p::ToolContext,
            #args: ::core::option::Option<&#p::RawValue>,
            #out: &mut #p::Vec<u8>,
        ) -> ::core::option::Option<#p::ToolFuture> {
            #body
        }
    }
}

/// `fn __output_schema() -> Schema` for `structured` tools.
fn output_schema(tool: &Tool, p: &TokenStream) -> Option<TokenStream> {
    tool.attr.structured?;
    let ty = &tool.ret;
    let name = ident("__output_schema");
    let call = quote_spanned! {ty.span()=>
        (&#p::Probe::<#ty>::NEW).__kind().output_schema()
    };
    Some(quote! {
        fn #name() -> #p::Schema {
            use #p::{ResultTag as _, ValueTag as _};
            #call
        }
    })
}

fn tool_def(
    tool: &Tool,
    item: &ItemFn,
    p: &TokenStream,
    args_ty: &TokenStream,
    structured: bool,
) -> TokenStream {
    let (name, _) = tool.name();
    let description = tool.description().unwrap_or_default();
    let attr = &tool.attr;
    let title = attr
        .title
        .as_ref()
        .map_or_else(|| quote!(#p::None), |title| quote!(#p::Some(#title)));
    let hint = |flag: Option<Span>| {
        if flag.is_some() {
            quote!(#p::Some(true))
        } else {
            quote!(#p::None)
        }
    };
    let (read_only, destructive, idempotent, open_world) = (
        hint(attr.read_only),
        hint(attr.destructive),
        hint(attr.idempotent),
        hint(attr.open_world),
    );
    let output_schema = if structured {
        let f = ident("__output_schema");
        quote!(#p::Some(#f))
    } else {
        quote!(#p::None)
    };
    let states = tool.contexts().map(|param| {
        let ty = &param.ty;
        quote_spanned!(ty.span()=> #p::state_of::<#ty>)
    });
    let execution = if tool.is_async {
        quote!(Async)
    } else if attr.blocking.is_some() {
        quote!(Blocking)
    } else {
        quote!(Inline)
    };
    // `line!()`/`file!()` spanned on the function's name report its own
    // location, not the attribute's.
    let fn_span = item.sig.ident.span();
    let line = quote_spanned!(fn_span=> ::core::line!());
    let file = quote_spanned!(fn_span=> ::core::file!());
    let shim = ident("__call");
    let static_name = ident("__TOOL");
    quote! {
        #[#p::linkme::distributed_slice(#p::IDE_MCP_RUNTIME_TOOLS_V0)]
        #[linkme(crate = #p::linkme)]
        static #static_name: #p::ToolDef = #p::ToolDef {
            name: #name,
            description: #description,
            annotations: #p::ToolAnnotations {
                title: #title,
                read_only_hint: #read_only,
                destructive_hint: #destructive,
                idempotent_hint: #idempotent,
                open_world_hint: #open_world,
            },
            input_schema: #p::input_schema::<#args_ty>,
            output_schema: #output_schema,
            states: &[#(#states),*],
            execution: #p::Execution::#execution,
            call: #shim,
            location: #p::SourceLocation {
                crate_name: ::core::env!("CARGO_PKG_NAME"),
                file: #file,
                line: #line,
            },
        };
    }
}
