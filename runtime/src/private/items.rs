//! What the code `#[mcp_resource]` and `#[mcp_prompt]` generate names,
//! beside what they share with `#[mcp_tool]`.

use crate::context::StateReq;
use crate::extract::Call;
use crate::prompt::{IntoPromptResult, PromptArgumentType};
use crate::resource::{IntoResourceContents, ListHandler, ListedResource};
use crate::result::ResultOut;

/// Writes a resource function's value as the read of `uri`, the call's.
pub fn write_resource<T: IntoResourceContents>(
    value: T,
    uri: Option<&str>,
    mime_type: Option<&str>,
    out: &mut ResultOut<'_>,
) {
    crate::resource::write_contents(value, uri.unwrap_or(""), mime_type, out);
}

/// Writes a prompt function's value as the messages of `prompts/get`.
pub fn write_prompt<T: IntoPromptResult>(value: T, out: &mut ResultOut<'_>) {
    crate::prompt::write_messages(value, out);
}

/// Lists a template's resources through the user's lister; a parameter it
/// cannot take lists nothing.
pub fn list_with<'a, F: ListHandler<'a, P>, P>(
    call: &Call<'a>,
    list: F,
    template: &str,
) -> Vec<ListedResource> {
    list.list(call).unwrap_or_else(|why| {
        tracing::warn!(template, %why, "the resources of the template cannot be listed");
        Vec::new()
    })
}

/// The states a lister's parameters need.
pub fn list_states<'a, F: ListHandler<'a, P>, P>(_: &F, out: &mut Vec<StateReq>) {
    F::states(out);
}

/// A prompt argument's type, checked to be a string (`String`, `Option<String>`).
pub const fn prompt_argument<T: PromptArgumentType>() {}
