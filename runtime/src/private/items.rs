//! What the code `#[mcp_resource]` and `#[mcp_prompt]` generate names,
//! beside what they share with `#[mcp_tool]`.

use crate::context::StateReq;
use crate::extract::{Call, Rejection};
use crate::prompt::{IntoPromptResult, PromptArgumentType};
use crate::resource::{IntoResourceContents, ListHandler, ListedResource};
use crate::result::{Outcome, ResultOut};

/// Writes a resource function's value as the read of `uri`, the call's.
pub fn write_resource<T: IntoResourceContents>(
    value: T,
    uri: Option<&str>,
    mime_type: Option<&str>,
    out: &mut ResultOut<'_>,
) -> Outcome {
    crate::resource::write_contents(value, uri.unwrap_or(""), mime_type, out)
}

/// Writes a prompt function's value as the messages of `prompts/get`.
pub fn write_prompt<T: IntoPromptResult>(value: T, out: &mut ResultOut<'_>) -> Outcome {
    crate::prompt::write_messages(value, out)
}

/// A template's lister, checked to be a [`ListHandler`] once: the two
/// uses (its states, its list) go through [`lister`] alone, spanned alike,
/// so that a wrong `list = f` is one error.
pub struct Lister<'a, F> {
    f: F,
    list: fn(F, &Call<'a>) -> Result<Vec<ListedResource>, Rejection>,
    states: fn(&mut Vec<StateReq>),
}

/// The user's `list = f`, checked.
pub fn lister<'a, F: ListHandler<'a, P>, P>(f: F) -> Lister<'a, F> {
    Lister {
        f,
        list: F::list,
        states: F::states,
    }
}

impl<'a, F> Lister<'a, F> {
    /// The states the lister's parameters need.
    pub fn states(&self, out: &mut Vec<StateReq>) {
        (self.states)(out);
    }

    /// Lists a template's resources; a parameter it cannot take lists nothing.
    pub fn list(self, call: &Call<'a>, template: &str) -> Vec<ListedResource> {
        (self.list)(self.f, call).unwrap_or_else(|why| {
            tracing::warn!(template, %why, "the resources of the template cannot be listed");
            Vec::new()
        })
    }
}

/// The states of an item whose parameters are all arguments: none.
pub fn no_states(_: &mut Vec<StateReq>) {}

/// A prompt argument's type, checked to be a string (`String`, `Option<String>`).
pub const fn prompt_argument<T: PromptArgumentType>() {}
