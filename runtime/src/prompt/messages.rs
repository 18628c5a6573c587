//! What a `prompts/get` answers: the messages a prompt function returns,
//! written as `{"description"?,"messages":[…]}`, or the error it fails with.

use std::fmt::Display;

use serde::Serialize;

use crate::jsonrpc;
use crate::resource::ResourceContents;
use crate::result::{Outcome, ResultOut, RpcError};

/// Who speaks a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user's turn.
    User,
    /// The assistant's turn.
    Assistant,
}

/// The content of one message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum PromptContent {
    /// `{"type":"text","text":…}`.
    Text {
        /// The text.
        text: String,
    },
    /// `{"type":"resource","resource":{…}}`: a resource's contents, embedded.
    Resource {
        /// The contents (with their URI).
        resource: ResourceContents,
    },
}

/// One message of a prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PromptMessage {
    /// Who speaks it.
    pub role: Role,
    /// What it says.
    pub content: PromptContent,
}

impl PromptMessage {
    /// A user message with this text.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: PromptContent::Text { text: text.into() },
        }
    }

    /// An assistant message with this text.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: PromptContent::Text { text: text.into() },
        }
    }

    /// A user message embedding a resource's contents (which carry their URI).
    pub fn resource(resource: ResourceContents) -> Self {
        Self {
            role: Role::User,
            content: PromptContent::Resource { resource },
        }
    }
}

/// A whole `prompts/get` result.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PromptResult {
    /// A description of this rendering of the prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages, in order.
    pub messages: Vec<PromptMessage>,
}

/// Types a `#[mcp_prompt]` function may return: a `String` (one user
/// message), a [`PromptMessage`] or a `Vec` of them, a [`PromptResult`],
/// or a `Result` of those (an `Err` fails the request, -32603, with its
/// message).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the messages of a prompt",
    label = "not prompt messages",
    note = "return `String` (one user message), `Vec<PromptMessage>`, `PromptResult`, or a `Result` of those"
)]
pub trait IntoPromptResult {
    /// The result, or why there is none.
    fn into_prompt_result(self) -> Result<PromptResult, String>;
}

impl IntoPromptResult for PromptResult {
    fn into_prompt_result(self) -> Result<PromptResult, String> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<PromptResult, String> {
        Ok(PromptResult {
            description: None,
            messages: self,
        })
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<PromptResult, String> {
        vec![self].into_prompt_result()
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<PromptResult, String> {
        PromptMessage::user(self).into_prompt_result()
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<PromptResult, String> {
        PromptMessage::user(self).into_prompt_result()
    }
}

impl<T: IntoPromptResult, E: Display> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<PromptResult, String> {
        self.map_err(|err| err.to_string())?.into_prompt_result()
    }
}

/// Writes what a prompt function returned as the `prompts/get` result, or
/// returns its error.
pub(crate) fn write_messages(value: impl IntoPromptResult, out: &mut ResultOut<'_>) -> Outcome {
    match value.into_prompt_result() {
        Ok(result) => {
            out.build(|buf| {
                serde_json::to_writer(buf, &result).expect("strings serialize");
            });
            Outcome::Written
        }
        Err(message) => Outcome::RpcError(RpcError {
            code: jsonrpc::INTERNAL_ERROR,
            message,
        }),
    }
}
