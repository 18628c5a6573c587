//! Code generation for a valid tool. Never reports user errors: those were
//! found by `ast.rs` and `check.rs`; type errors are left to rustc, with
//! bounds spanned on the user's tokens so that they land there.
//!
//! The expansion, beside the function itself:
//!
//! ```text
//! const _: () = {
//!     use ::ide_mcp_runtime::__private0_1 as __ide_mcp_private;
//!     use __ide_mcp_private::{ArgTag as _, ..};   // the probes' traits, once
//!     fn __input_schema() -> Schema { .. }       // one property per argument
//!     fn __states(out: &mut Vec<StateReq>) { .. } // the states the extractors need (if any)
//!     fn __shim(call, args, out) -> CallOutcome { .. }
//!     register_tool! { static __TOOL: ToolDef = ToolDef { .. }; }
//! };
//! ```
//!
//! Parameter types are only ever named inside `argument::<T>()`,
//! `extractor::<T>()` or the probe `Param::<T>` (see `param_source`),
//! spanned on the parameter, and the bounds live on those and their
//! methods: a wrong type is one error at the parameter (rustc reports
//! identical diagnostics once). For the same reason no arguments struct is
//! derived: its derives would repeat it.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned as _;
use syn::{Ident, ItemFn};

use crate::ast::{Param, ParamKind, Tool};
use crate::attr::Kind;

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

    let input_schema = (tool.attr.kind != Kind::Resource).then(|| input_schema(tool, &p));
    let states = needs_states(tool).then(|| states(tool, &p));
    let shim = shim(tool, &p);
    let output_schema = output_schema(tool, &p);
    let tool_def = match tool.attr.kind {
        Kind::Tool => tool_def(tool, item, &p, output_schema.is_some()),
        Kind::Resource => resource_def(tool, item, &p),
        Kind::Prompt => prompt_def(tool, item, &p),
    };

    // Lints in the expansion are named one by one, so that the user's own
    // lints keep seeing the user's code:
    // - on the function, only `needless_pass_by_value`: arguments are decoded
    //   into owned values (`DeserializeOwned`), so the signature is the
    //   attribute's contract and clippy's advice to borrow them cannot be
    //   followed;
    // - on the hidden block, `unused_imports` (the probes' traits are
    //   imported together, and only some of them resolve) and `unused_qualifications`
    //   (paths are absolute, whatever the user imported). The probes'
    //   double borrows are what autoref specialization needs, so the
    //   block also allows `clippy::needless_borrow`.
    // Clippy does not lint the rest of the expansion: it comes from a macro.
    quote! {
        #[allow(clippy::needless_pass_by_value)]
        #item

        #[doc(hidden)]
        #[allow(unused_imports, unused_qualifications, clippy::needless_borrow)]
        const _: () = {
            use #krate::__private0_1 as #p;
            // The probes' traits, for every probe of the block.
            use #p::{ArgTag as _, ExtractTag as _, IntoTag as _, ResultTag as _, ValueTag as _};
            #input_schema
            #states
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

/// Where a parameter comes from, as the generated code decides it.
enum Source {
    /// Decoded from the JSON arguments: `argument::<T>()`.
    Argument,
    /// Taken from the call: `extractor::<T>()`.
    Extractor,
    /// Left to the type: `(&Param::<T>::NEW).__param()`, an extractor when
    /// `T: FromCall` and an argument otherwise.
    Probe,
}

/// How the generated code decides where `param` comes from.
fn source(tool: &Tool, param: &Param) -> Source {
    match &param.kind {
        ParamKind::Extract => Source::Extractor,
        // Beside `#[args]`, every other parameter is taken from the call.
        ParamKind::Arg(arg) if arg.probe && tool.args_param().is_some() => Source::Extractor,
        ParamKind::Arg(arg) if arg.probe => Source::Probe,
        ParamKind::Arg(_) | ParamKind::Args { .. } => Source::Argument,
    }
}

/// The value whose methods (`early`, `late`, `schema_into`, `states`) take
/// `param`, spanned on its type so that a bound that fails is reported there.
fn param_source(tool: &Tool, param: &Param, p: &TokenStream) -> TokenStream {
    let ty = &param.ty;
    match source(tool, param) {
        Source::Argument => quote_spanned!(ty.span()=> #p::argument::<#ty>()),
        Source::Extractor => quote_spanned!(ty.span()=> #p::extractor::<#ty>()),
        // The probe's traits are imported once, at the top of the block.
        Source::Probe => quote_spanned!(ty.span()=> (&#p::Param::<#ty>::NEW).__param()),
    }
}

/// `fn __input_schema() -> Schema`: the `#[args]` type's schema, or one property per argument.
fn input_schema(tool: &Tool, p: &TokenStream) -> TokenStream {
    let name = ident("__input_schema");
    let schema = ident("__schema");
    let body = if let Some(param) = tool.args_param() {
        let arg = param_source(tool, param, p);
        quote!(#arg.schema())
    } else if tool.args().count() <= MAX_SYNC_PARAMS {
        // The sources in a tuple, for the runtime's generic `object_schema`.
        let (mut sources, mut wires, mut descriptions, mut defaults) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (param, arg) in tool.args() {
            sources.push(param_source(tool, param, p));
            wires.push(&arg.wire_name);
            descriptions.push(option(
                arg.description.as_ref().map(ToTokens::to_token_stream),
            ));
            defaults.push(arg.default);
        }
        quote! {
            #p::object_schema(
                &(#(#sources,)*),
                &[#(#wires),*],
                &[#(#descriptions),*],
                &[#(#defaults),*],
            )
        }
    } else {
        let args = tool.args().map(|(param, arg)| {
            let wire = &arg.wire_name;
            let source = param_source(tool, param, p);
            let description = option(arg.description.as_ref().map(ToTokens::to_token_stream));
            let default = arg.default;
            let method = Ident::new("schema_into", param.ty.span());
            quote!(let #schema = #source.#method(#schema, #wire, #description, #default);)
        });
        quote! {
            let #schema = #p::ObjectSchema::new();
            #(#args)*
            #schema.build()
        }
    };
    quote! {
        fn #name() -> #p::Schema {
            #body
        }
    }
}

/// Whether the item may need a state: an extractor, a parameter whose
/// source its type decides, or a lister. Without any, the definition
/// names the runtime's `no_states` instead of a `__states` of its own.
fn needs_states(tool: &Tool) -> bool {
    tool.attr.list.is_some()
        || tool
            .params
            .iter()
            .any(|param| !matches!(source(tool, param), Source::Argument))
}

/// What the definition's `states` names: `__states`, or `no_states`.
fn states_fn(tool: &Tool, p: &TokenStream) -> TokenStream {
    if needs_states(tool) {
        ident("__states").into_token_stream()
    } else {
        quote!(#p::no_states)
    }
}

/// `fn __states(out)`: the states the parameters need.
fn states(tool: &Tool, p: &TokenStream) -> TokenStream {
    let name = ident("__states");
    let out = ident("__out");
    let body = if tool.params.len() <= MAX_SYNC_PARAMS {
        // The sources in a tuple, for the runtime's generic `states`.
        let sources = tool.params.iter().map(|param| param_source(tool, param, p));
        quote!(#p::states(&(#(#sources,)*), #out);)
    } else {
        let each = tool.params.iter().map(|param| {
            let source = param_source(tool, param, p);
            let method = Ident::new("states", param.ty.span());
            quote!(#source.#method(#out);)
        });
        quote!(#(#each)*)
    };
    let lister = tool.attr.list.as_ref().map(|list| {
        // As in `__list`, to the token: one error for a wrong lister.
        let lister = quote_spanned!(list.span()=> #p::lister(#list));
        quote!(#lister.states(#out);)
    });
    quote! {
        fn #name(#out: &mut #p::Vec<#p::StateReq>) {
            #body
            #lister
        }
    }
}

/// Converts the value `ret` of the return type into the result, in `out`:
/// an expression of the write's `Outcome`.
fn write_result(tool: &Tool, p: &TokenStream, ret: &Ident, out: &TokenStream) -> TokenStream {
    let ty = &tool.ret;
    match tool.attr.kind {
        Kind::Tool => {}
        Kind::Resource => {
            let uri = ident("__uri");
            let mime = option(tool.attr.mime_type.as_ref().map(ToTokens::to_token_stream));
            return quote_spanned! {ty.span()=>
                #p::write_resource::<#ty>(#ret, #uri.as_deref(), #mime, #out)
            };
        }
        Kind::Prompt => {
            return quote_spanned!(ty.span()=> #p::write_prompt::<#ty>(#ret, #out));
        }
    }
    // The method carries the bounds, so it is the token an error is reported at.
    let method = if tool.attr.structured.is_some() {
        Ident::new("write_structured", ty.span())
    } else {
        Ident::new("write", ty.span())
    };
    // A tool's value is always written: its failure is a result too.
    let write = quote_spanned! {ty.span()=>
        (&&#p::Probe::<#ty>::NEW).__kind().#method(#ret, #out);
    };
    quote!({ #write #p::Outcome::Written })
}

/// The value of `result`, a `Result<T, Invalid>`, or the shim returns
/// the refusal as its outcome.
fn or_refuse(result: &TokenStream) -> TokenStream {
    let (value, invalid) = (ident("__value"), ident("__invalid"));
    quote! {
        match #result {
            ::core::result::Result::Ok(#value) => #value,
            ::core::result::Result::Err(#invalid) => return ::core::convert::From::from(#invalid),
        }
    }
}

/// The wire names of the plain arguments, in order: the slots of `ArgsObject`.
fn wire_names(tool: &Tool) -> Vec<&str> {
    tool.args().map(|(_, arg)| arg.wire_name.as_str()).collect()
}

/// The names the shim's parts share.
struct ShimNames {
    cx: Ident,
    args: Ident,
    out: Ident,
    fields: Ident,
    ret: Ident,
}

impl ShimNames {
    fn new() -> Self {
        Self {
            cx: ident("__call"),
            args: ident("__args"),
            out: ident("__out"),
            fields: ident("__fields"),
            ret: ident("__ret"),
        }
    }
}

/// A parameter's two steps: `early`, before the call, decodes the
/// arguments (a spawned tool cannot keep borrowing them), and `late`, when
/// the tool runs, takes the extractors from the call.
struct Steps {
    /// The statements decoding every parameter (and the arguments object).
    early: Vec<TokenStream>,
    /// Each parameter's local and the expression that takes its value.
    lates: Vec<(Ident, TokenStream)>,
}

/// `fn __shim(call, args, out) -> CallOutcome`: the `CallFn` of the tool.
fn shim(tool: &Tool, p: &TokenStream) -> TokenStream {
    let names = ShimNames::new();
    let steps = steps(tool, p, &names);
    let body = if tool.is_async {
        async_body(tool, p, &names, steps)
    } else {
        sync_body(tool, p, &names, steps)
    };
    let ShimNames { cx, args, out, .. } = &names;
    let shim = ident("__shim");
    quote! {
        fn #shim(
            #cx: &#p::Call<'_>,
            #args: ::core::option::Option<#p::Arguments<'_>>,
            #out: &mut #p::ResultOut<'_>,
        ) -> #p::CallOutcome {
            #body
        }
    }
}

/// Each parameter's [`Steps`], in order.
fn steps(tool: &Tool, p: &TokenStream, names: &ShimNames) -> Steps {
    let name = tool.subject();
    let ShimNames {
        cx, args, fields, ..
    } = names;
    let mut early = Vec::new();
    let wire_names = wire_names(tool);
    if !wire_names.is_empty() && tool.args_param().is_none() {
        let parse = or_refuse(&quote!(#p::ArgsObject::parse(#name, #args, [#(#wire_names),*])));
        early.push(quote!(let #fields = #parse;));
    }
    let mut slot = 0_usize;
    let mut lates = Vec::new();
    for (i, param) in tool.params.iter().enumerate() {
        let local = format_ident!("__param{}", i, span = Span::mixed_site());
        let source = param_source(tool, param, p);
        let span = param.ty.span();
        let decode = match &param.kind {
            ParamKind::Args { .. } => or_refuse(&quote!(#source.decode_object(#name, #args))),
            ParamKind::Arg(arg) if tool.args_param().is_none() => {
                let method = if arg.default {
                    Ident::new("early_or_default", span)
                } else {
                    Ident::new("early", span)
                };
                let decoded = or_refuse(&quote!(#source.#method(#name, &#fields, #slot)));
                slot += 1;
                decoded
            }
            // No arguments object is parsed: nothing to decode.
            ParamKind::Arg(_) | ParamKind::Extract => quote!(#p::Deferred),
        };
        if let (Kind::Prompt | Kind::Resource, ParamKind::Arg(_)) = (tool.attr.kind, &param.kind) {
            let ty = &param.ty;
            early.push(quote_spanned!(span=> const _: () = #p::prompt_argument::<#ty>();));
        }
        early.push(quote!(let #local = #decode;));
        let late = Ident::new("late", span);
        let take = quote!(#source.#late(#local, &#cx));
        lates.push((local, take));
    }
    Steps { early, lates }
}

/// An async tool's shim body: decoded now, run in a future that owns the
/// call, its value written when the runtime asks (into the response itself
/// when the future was ready at once).
fn async_body(tool: &Tool, p: &TokenStream, names: &ShimNames, steps: Steps) -> TokenStream {
    let ShimNames { cx, out, ret, .. } = names;
    let func = &tool.ident;
    let owned = ident("__owned");
    let Steps { early, lates } = steps;
    let call_args = lates.iter().map(|(local, _)| local);
    let takes = lates.iter().map(|(local, late)| {
        quote! {
            let #local = match #p::reply_rejected(#late) {
                ::core::result::Result::Ok(value) => value,
                ::core::result::Result::Err(reply) => return reply,
            };
        }
    });
    let write = write_result(tool, p, ret, &out.to_token_stream());
    let uri = (tool.attr.kind == Kind::Resource).then(|| {
        let uri = ident("__uri");
        quote!(let #uri = #cx.resource_uri().map(::std::string::ToString::to_string);)
    });
    quote! {
        #(#early)*
        let #owned = #p::Call::to_owned(#cx);
        #p::pending(async move {
            let #cx = #p::OwnedCall::as_call(&#owned);
            #(#takes)*
            #uri
            let #ret = #func(#(#call_args),*).await;
            #p::reply(move |#out: &mut #p::ResultOut<'_>| #write)
        })
    }
}

/// The most parameters the runtime's generic sync shim (`sync_params`) takes.
const MAX_SYNC_PARAMS: usize = 12;

/// A sync tool's shim body: decoded, run and written in place. Each
/// parameter's source is named once, in a tuple that the runtime's generic
/// `sync_params` takes (the same steps, in the same order, as `steps`),
/// so that the code of the steps is the runtime's, instantiated once per
/// tuple of parameter types, not expanded in each tool; a tool of more
/// parameters than it takes has the steps expanded here.
fn sync_body(tool: &Tool, p: &TokenStream, names: &ShimNames, steps: Steps) -> TokenStream {
    let ShimNames {
        cx, args, out, ret, ..
    } = names;
    let func = &tool.ident;
    let Steps { early, lates } = steps;
    let call_args = lates.iter().map(|(local, _)| local);
    let write = write_result(tool, p, ret, &out.to_token_stream());
    let uri = (tool.attr.kind == Kind::Resource).then(|| {
        let uri = ident("__uri");
        quote!(let #uri = #cx.resource_uri();)
    });
    if tool.params.len() > MAX_SYNC_PARAMS {
        let takes = lates.iter().map(|(local, late)| {
            let take = or_refuse(&quote!(#p::rejected(#late)));
            quote!(let #local = #take;)
        });
        return quote! {
            #(#early)*
            #(#takes)*
            #uri
            let #ret = #func(#(#call_args),*);
            #p::CallOutcome::Done(#write)
        };
    }
    let name = tool.subject();
    // A prompt's and a resource's arguments are strings, checked at each one.
    let checks = tool
        .args()
        .filter(|_| tool.attr.kind != Kind::Tool)
        .map(|(param, _)| {
            let ty = &param.ty;
            quote_spanned!(ty.span()=> let _ = #p::prompt_argument::<#ty>;)
        });
    // No arguments object is split for `#[args]`, nor with no plain argument.
    let wire_names = if tool.args_param().is_none() {
        wire_names(tool)
    } else {
        Vec::new()
    };
    let sources = param_sources(tool, p);
    if tool.attr.kind != Kind::Tool {
        let shim = item_shim(tool, p, names, &wire_names, &sources);
        return quote! {
            #(#checks)*
            #shim
        };
    }
    let locals = lates.iter().map(|(local, _)| local);
    let params = or_refuse(&quote! {
        #p::sync_params(#name, #args, [#(#wire_names),*], &(#(#sources,)*), &#cx)
    });
    quote! {
        #(#checks)*
        let (#(#locals,)*) = #params;
        #uri
        let #ret = #func(#(#call_args),*);
        #p::CallOutcome::Done(#write)
    }
}

/// Where each parameter of a sync shim comes from, in order: the tuple
/// of steps the runtime's `sync_params` (or the item shims) run.
fn param_sources(tool: &Tool, p: &TokenStream) -> Vec<TokenStream> {
    let mut slot = 0_usize;
    tool.params
        .iter()
        .map(|param| {
            let source = param_source(tool, param, p);
            let span = param.ty.span();
            match &param.kind {
                ParamKind::Args { .. } => quote_spanned!(span=> #p::object(#source)),
                ParamKind::Arg(arg) if tool.args_param().is_none() => {
                    let at = slot;
                    slot += 1;
                    if arg.default {
                        // The `Default` bound is on the function, spanned on the type.
                        quote_spanned!(span=> #p::slot_or_default(#source, #at))
                    } else {
                        quote_spanned!(span=> #p::slot(#source, #at))
                    }
                }
                ParamKind::Arg(_) | ParamKind::Extract => {
                    quote_spanned!(span=> #p::extract(#source))
                }
            }
        })
        .collect()
}

/// A resource's or a prompt's whole sync shim: the runtime's, through
/// function pointers (the item's and its writer's, the writer named at the
/// return type, so that its bound is reported there): one instantiation
/// for every item of the same parameter and return types.
fn item_shim(
    tool: &Tool,
    p: &TokenStream,
    names: &ShimNames,
    wire_names: &[&str],
    sources: &[TokenStream],
) -> TokenStream {
    let ShimNames { cx, args, out, .. } = names;
    let name = tool.subject();
    let ty = &tool.ret;
    let func = &tool.ident;
    let holes = tool.params.iter().map(|_| quote!(_));
    let func = quote!(#func as fn(#(#holes),*) -> _);
    if tool.attr.kind == Kind::Resource {
        let mime = option(tool.attr.mime_type.as_ref().map(ToTokens::to_token_stream));
        let write = quote_spanned!(ty.span()=> #p::write_resource::<#ty>);
        quote!(#p::sync_resource(#name, #args, [#(#wire_names),*], &(#(#sources,)*), &#cx, #out, #func, #write, #mime))
    } else {
        let write = quote_spanned!(ty.span()=> #p::write_prompt::<#ty>);
        quote!(#p::sync_prompt(#name, #args, [#(#wire_names),*], &(#(#sources,)*), &#cx, #out, #func, #write))
    }
}

/// `fn __output_schema() -> Schema` for `structured` tools.
fn output_schema(tool: &Tool, p: &TokenStream) -> Option<TokenStream> {
    tool.attr.structured?;
    let ty = &tool.ret;
    let name = ident("__output_schema");
    let method = Ident::new("output_schema", ty.span());
    let call = quote_spanned! {ty.span()=>
        (&&#p::Probe::<#ty>::NEW).__kind().#method()
    };
    Some(quote! {
        fn #name() -> #p::Schema {
            #call
        }
    })
}

fn tool_def(tool: &Tool, item: &ItemFn, p: &TokenStream, structured: bool) -> TokenStream {
    let (name, _) = tool.name();
    let description = tool.description().unwrap_or_default();
    let attr = &tool.attr;
    let title = option(attr.title.as_ref().map(ToTokens::to_token_stream));
    let face = option(attr.face.as_ref().map(ToTokens::to_token_stream));
    let hint = |flag: Option<Span>| option(flag.map(|_| quote!(true)));
    let (read_only, destructive, idempotent, open_world) = (
        hint(attr.read_only),
        hint(attr.destructive),
        hint(attr.idempotent),
        hint(attr.open_world),
    );
    let output_schema = option(structured.then(|| ident("__output_schema").into_token_stream()));
    let execution = execution(tool);
    let location = location(item, p);
    let input_schema = ident("__input_schema");
    let states = states_fn(tool, p);
    let shim = ident("__shim");
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
                states: #states,
                execution: #p::Execution::#execution,
                call: #shim,
                face: #face,
                location: #location,
            };
        }
    }
}

/// Where the item was defined: `line!()`/`file!()` spanned on the
/// function's name report its own location, not the attribute's.
fn location(item: &ItemFn, p: &TokenStream) -> TokenStream {
    let fn_span = item.sig.ident.span();
    let line = quote_spanned!(fn_span=> ::core::line!());
    let file = quote_spanned!(fn_span=> ::core::file!());
    quote! {
        #p::SourceLocation {
            crate_name: ::core::env!("CARGO_PKG_NAME"),
            file: #file,
            line: #line,
        }
    }
}

/// How the runtime runs the shim: the name of an `Execution` variant.
fn execution(tool: &Tool) -> TokenStream {
    if tool.is_async {
        quote!(Async)
    } else if tool.attr.blocking.is_some() {
        quote!(Blocking)
    } else {
        quote!(Inline)
    }
}

fn resource_def(tool: &Tool, item: &ItemFn, p: &TokenStream) -> TokenStream {
    let attr = &tool.attr;
    let (name, _) = tool.name();
    let description = tool.description().unwrap_or_default();
    let uri = &attr.uri;
    let title = option(attr.title.as_ref().map(ToTokens::to_token_stream));
    let mime_type = option(attr.mime_type.as_ref().map(ToTokens::to_token_stream));
    let list = attr.list.as_ref().map(|list| {
        let lister = ident("__list");
        let call = ident("__call");
        let checked = quote_spanned!(list.span()=> #p::lister(#list));
        let body = quote!(#checked.list(#call, #uri));
        quote! {
            fn #lister(#call: &#p::Call<'_>) -> #p::Vec<#p::ListedResource> {
                #body
            }
        }
    });
    let list_fn = option(list.as_ref().map(|_| ident("__list").into_token_stream()));
    let execution = execution(tool);
    let location = location(item, p);
    let (states, shim, static_name) = (states_fn(tool, p), ident("__shim"), ident("__RESOURCE"));
    quote! {
        #list
        #p::register_resource! {
            static #static_name: #p::ResourceDef = #p::ResourceDef {
                uri: #uri,
                name: #name,
                title: #title,
                description: #description,
                mime_type: #mime_type,
                list: #list_fn,
                states: #states,
                execution: #p::Execution::#execution,
                call: #shim,
                location: #location,
            };
        }
    }
}

fn prompt_def(tool: &Tool, item: &ItemFn, p: &TokenStream) -> TokenStream {
    let attr = &tool.attr;
    let (name, _) = tool.name();
    let description = tool.description().unwrap_or_default();
    let title = option(attr.title.as_ref().map(ToTokens::to_token_stream));
    let execution = execution(tool);
    let location = location(item, p);
    let (arguments, states, shim) = (ident("__input_schema"), states_fn(tool, p), ident("__shim"));
    let static_name = ident("__PROMPT");
    quote! {
        #p::register_prompt! {
            static #static_name: #p::PromptDef = #p::PromptDef {
                name: #name,
                title: #title,
                description: #description,
                arguments: #arguments,
                states: #states,
                execution: #p::Execution::#execution,
                call: #shim,
                location: #location,
            };
        }
    }
}
