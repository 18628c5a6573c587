//! Code generation for a valid tool. Never reports user errors: those were
//! found by `ast.rs` and `check.rs`; type errors are left to rustc, with
//! bounds spanned on the user's tokens so that they land there.
//!
//! The expansion, beside the function itself:
//!
//! ```text
//! const _: () = {
//!     use ::ide_mcp_runtime::__private as __ide_mcp_private;
//!     fn __input_schema() -> Schema { .. }       // one property per argument
//!     fn __call(cx, args, out) -> Option<ToolFuture> { .. }
//!     register_tool! { static __TOOL: ToolDef = ToolDef { .. }; }
//! };
//! ```
//!
//! Argument and context types are only ever named inside
//! `argument::<T>()` / `context_param::<T>()`, spanned on the parameter: the
//! bound lives on those `const fn`s alone, so a wrong type is one error at
//! the parameter (rustc reports identical diagnostics once). For the same
//! reason no arguments struct is derived: its derives would repeat it.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned as _;
use syn::{Ident, ItemFn, Type};

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
    // Every generated path goes through this one import: a `crate = path`
    // that does not resolve is one error at the path, and the uses of the
    // failed import are not reported again.
    let p = Ident::new("__ide_mcp_private", Span::call_site()).into_token_stream();

    let input_schema = input_schema(tool, &p);
    let shim = shim(tool, &p);
    let output_schema = output_schema(tool, &p);
    let tool_def = tool_def(tool, item, &p, output_schema.is_some());

    // Arguments are decoded into owned values, so the signature is the
    // attribute's contract: clippy's advice to borrow them cannot be followed.
    quote! {
        #[allow(clippy::needless_pass_by_value)]
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
            use #krate::__private as #p;
            #input_schema
            #shim
            #output_schema
            #tool_def
        };
    }
}

/// `Some(value)` or `None`, as an expression.
fn option(value: Option<TokenStream>) -> TokenStream {
    value.map_or_else(
        || quote!(::core::option::Option::None),
        |value| quote!(::core::option::Option::Some(#value)),
    )
}

/// `argument::<T>()`, spanned on `T`.
fn argument(ty: &Type, p: &TokenStream) -> TokenStream {
    quote_spanned!(ty.span()=> #p::argument::<#ty>())
}

/// `context_param::<T>()`, spanned on `T`.
fn context_param(ty: &Type, p: &TokenStream) -> TokenStream {
    quote_spanned!(ty.span()=> #p::context_param::<#ty>())
}

/// `fn __input_schema() -> Schema`: the `#[args]` type's schema, or one property per argument.
fn input_schema(tool: &Tool, p: &TokenStream) -> TokenStream {
    let name = ident("__input_schema");
    let body = if let Some(param) = tool.args_param() {
        let arg = argument(&param.ty, p);
        quote!(#arg.schema())
    } else {
        let args = tool.args().map(|(param, arg)| {
            let wire = &arg.wire_name;
            let argument = argument(&param.ty, p);
            let description = option(arg.description.as_ref().map(ToTokens::to_token_stream));
            let default = arg.default;
            quote!(.arg(#wire, #argument, #description, #default))
        });
        quote!(#p::ObjectSchema::new() #(#args)* .build())
    };
    quote! {
        fn #name() -> #p::Schema {
            #body
        }
    }
}

/// Converts the value `ret` of the return type into the result, in `out`.
fn write_result(tool: &Tool, p: &TokenStream, ret: &Ident, out: &TokenStream) -> TokenStream {
    let ty = &tool.ret;
    // The method carries the bounds, so it is the token an error is reported at.
    let method = if tool.attr.structured.is_some() {
        Ident::new("write_structured", ty.span())
    } else {
        Ident::new("write", ty.span())
    };
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

/// The wire names of the plain arguments, in order: the slots of `ArgsObject`.
fn wire_names(tool: &Tool) -> Vec<&str> {
    tool.params
        .iter()
        .filter_map(|param| match &param.kind {
            ParamKind::Arg(arg) => Some(arg.wire_name.as_str()),
            _ => None,
        })
        .collect()
}

/// `fn __call(cx, args, out) -> Option<ToolFuture>`: the `CallFn` of the tool.
fn shim(tool: &Tool, p: &TokenStream) -> TokenStream {
    let (name, _) = tool.name();
    let cx = ident("__cx");
    let args = ident("__args");
    let out = ident("__out");
    let fields = ident("__fields");
    let ret = ident("__ret");
    let func = &tool.ident;

    // Arguments are decoded up front, in order; contexts are taken after.
    let mut decode = Vec::new();
    let wire_names = wire_names(tool);
    if !wire_names.is_empty() {
        decode.push(quote!(
            let #fields = #p::ArgsObject::parse(#name, #args, [#(#wire_names),*], #out)?;
        ));
    }
    let mut slot = 0_usize;
    let mut contexts = Vec::new();
    let mut call_args = Vec::new();
    for (i, param) in tool.params.iter().enumerate() {
        let local = format_ident!("__param{}", i, span = Span::mixed_site());
        match &param.kind {
            ParamKind::Context => contexts.push((local.clone(), &param.ty)),
            ParamKind::Arg(arg) => {
                let argument = argument(&param.ty, p);
                let take = if arg.default {
                    Ident::new("take_or_default", param.ty.span())
                } else {
                    Ident::new("take", param.ty.span())
                };
                decode.push(quote!(let #local = #argument.#take(#name, &#fields, #slot, #out)?;));
                slot += 1;
            }
            ParamKind::Args { .. } => {
                let argument = argument(&param.ty, p);
                decode.push(quote!(let #local = #argument.decode_object(#name, #args, #out)?;));
            }
        }
        call_args.push(local);
    }
    let extract = |ty: &Type, out: &TokenStream| {
        let param = context_param(ty, p);
        quote!(#param.extract(#cx, #out))
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
                let ::core::option::Option::Some(#local) = #get else {
                    return #p::reply_bytes(#out);
                };
            }
        });
        // The value is written when the runtime asks: into the response
        // itself when the future was ready at once.
        let write = write_result(tool, p, &ret, &out.to_token_stream());
        // A buffer for the error of a context that went missing meanwhile.
        let error_buf = (!contexts.is_empty()).then(|| quote!(let mut #out = #p::Vec::new();));
        quote! {
            #(#decode)*
            // Fail before spawning when a state is missing; taken again inside the future.
            #(#checks)*
            let #owned = #p::ToolContext::clone(#cx);
            ::core::option::Option::Some(#p::boxed_future(async move {
                #error_buf
                let #cx = &#owned;
                #(#takes)*
                let #ret = #func(#(#call_args),*).await;
                #p::reply(move |#out: &mut #p::Vec<u8>| #write)
            }))
        }
    } else {
        let takes = contexts.iter().map(|(local, ty)| {
            let get = extract(ty, &out.to_token_stream());
            quote!(let #local = #get?;)
        });
        let write = write_result(tool, p, &ret, &out.to_token_stream());
        quote! {
            #(#decode)*
            #(#takes)*
            let #ret = #func(#(#call_args),*);
            #write
            ::core::option::Option::None
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
    let method = Ident::new("output_schema", ty.span());
    let call = quote_spanned! {ty.span()=>
        (&#p::Probe::<#ty>::NEW).__kind().#method()
    };
    Some(quote! {
        fn #name() -> #p::Schema {
            use #p::{ResultTag as _, ValueTag as _};
            #call
        }
    })
}

fn tool_def(tool: &Tool, item: &ItemFn, p: &TokenStream, structured: bool) -> TokenStream {
    let (name, _) = tool.name();
    let description = tool.description().unwrap_or_default();
    let attr = &tool.attr;
    let title = option(attr.title.as_ref().map(ToTokens::to_token_stream));
    let hint = |flag: Option<Span>| option(flag.map(|_| quote!(true)));
    let (read_only, destructive, idempotent, open_world) = (
        hint(attr.read_only),
        hint(attr.destructive),
        hint(attr.idempotent),
        hint(attr.open_world),
    );
    let output_schema = option(structured.then(|| ident("__output_schema").into_token_stream()));
    let states = tool.contexts().map(|param| {
        let param = context_param(&param.ty, p);
        quote!(#param.required_state)
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
    let input_schema = ident("__input_schema");
    let shim = ident("__call");
    let static_name = ident("__TOOL");
    quote! {
        #p::register_tool! {
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
                input_schema: #input_schema,
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
}
