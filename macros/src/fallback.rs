//! What is emitted when the tool has errors: the function itself, unchanged
//! but for its helper attributes, beside the `compile_error!`s.
//!
//! Keeping the function means its callers and its body still type-check, so
//! the user sees our errors and not a second wave of "cannot find function".
//! No registry entry is emitted.

use proc_macro2::TokenStream;
use quote::ToTokens;

/// The function and every error.
pub(crate) fn expand(item: impl ToTokens, errors: &syn::Error) -> TokenStream {
    let mut tokens = errors.to_compile_error();
    item.to_tokens(&mut tokens);
    tokens
}
