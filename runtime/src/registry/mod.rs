//! The registry: every linked tool, resource and prompt, checked once,
//! sorted, with their lists pre-serialized.

mod build;
mod problem;
mod prompts;
mod resources;
mod tools;

pub use build::{Registry, ResourceMatch};
pub use problem::{RegistryError, RegistryProblem};
pub use prompts::{PromptArgument, RegisteredPrompt};
pub use resources::RegisteredTemplate;
pub use tools::RegisteredTool;
